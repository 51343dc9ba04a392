import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either } from "effect"
import fc from "fast-check"
import * as Approval from "../src/Approval.js"
import type { ChallengeId, CustomerId } from "../src/Ids.js"

const t0 = DateTime.unsafeMake("2026-03-31T10:00:00Z")
const at = (seconds: number) => DateTime.add(t0, { seconds })
const challenge = (): Approval.Challenge =>
  Approval.issue({
    id: "0b6a3c8e-0d3e-4f59-9a39-5f3b8f5f0c01" as ChallengeId,
    subjectKind: "mandate",
    subjectId: "m1",
    customerId: "c1" as CustomerId,
    environment: "live",
    codeHash: "hash",
    now: t0
  })

describe("Approval", () => {
  it("a challenge lives five minutes, with no attempts yet", () => {
    const c = challenge()
    expect(c.attempts).toBe(0)
    expect(c.usedAt).toBeNull()
    expect(DateTime.formatIso(c.expiresAt)).toBe("2026-03-31T10:05:00.000Z")
    expect([Approval.CodeLength, Approval.MaxAttempts, Approval.LifetimeMinutes]).toEqual([6, 5, 5])
  })

  it("the right code uses the challenge up; a second use is refused", () => {
    const first = Approval.verify(challenge(), true, at(10))
    expect(Either.isRight(first.outcome)).toBe(true)
    expect(first.challenge.attempts).toBe(1)
    expect(first.challenge.usedAt && DateTime.formatIso(first.challenge.usedAt)).toBe(
      "2026-03-31T10:00:10.000Z"
    )
    const again = Approval.verify(first.challenge, true, at(20))
    expect(again.outcome).toEqual(Either.left("used"))
    expect(again.challenge).toBe(first.challenge)
  })

  it("wrong codes count; the fifth locks, and then even the right code is refused", () => {
    let c = challenge()
    for (let i = 1; i <= 4; i++) {
      const r = Approval.verify(c, false, at(i))
      expect(r.outcome).toEqual(Either.left("incorrect"))
      expect(r.challenge.attempts).toBe(i)
      c = r.challenge
    }
    const fifth = Approval.verify(c, false, at(5))
    expect(fifth.outcome).toEqual(Either.left("locked"))
    expect(fifth.challenge.attempts).toBe(5)
    const right = Approval.verify(fifth.challenge, true, at(6))
    expect(right.outcome).toEqual(Either.left("locked"))
    expect(right.challenge).toBe(fifth.challenge)
  })

  it("at five minutes the code has expired, and the attempt is not counted", () => {
    const c = challenge()
    expect(Either.isRight(Approval.verify(c, true, at(299)).outcome)).toBe(true)
    const late = Approval.verify(c, true, at(300))
    expect(late.outcome).toEqual(Either.left("expired"))
    expect(late.challenge).toBe(c)
  })

  it("for any guesses at any times: at most five attempts count, and at most one succeeds", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ right: fc.boolean(), seconds: fc.integer({ min: 0, max: 400 }) })),
        (guesses) => {
          let c = challenge()
          let successes = 0
          for (const g of [...guesses].sort((a, b) => a.seconds - b.seconds)) {
            const r = Approval.verify(c, g.right, at(g.seconds))
            if (Either.isRight(r.outcome)) {
              successes++
              expect(g.right && g.seconds < 300).toBe(true)
            }
            expect(r.challenge.attempts).toBeLessThanOrEqual(Approval.MaxAttempts)
            expect(r.challenge.attempts - c.attempts).toBeLessThanOrEqual(1)
            c = r.challenge
          }
          expect(successes).toBeLessThanOrEqual(1)
        }
      )
    )
  })
})
