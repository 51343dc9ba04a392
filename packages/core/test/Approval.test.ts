import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either } from "effect"
import fc from "fast-check"
import * as Approval from "../src/approvals/Approval.js"
import type { ChallengeId, CustomerId } from "../src/kernel/Ids.js"

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
    expect(c.redactedAt).toBeNull()
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

// ---------------------------------------------------------------------------------------------------
// Caps across codes
// ---------------------------------------------------------------------------------------------------

const minute = 60
const hour = 60 * minute
const subjects = ["m1", "m2", "m3", "m4", "m5"] as const
const customers = ["c1", "c2"] as const

/** A challenge of `subject` for `customer` created at `seconds`, with `wrong` wrong guesses (and maybe used). */
const made = (
  n: number,
  subject: string,
  customer: string,
  seconds: number,
  wrong = 0,
  used = false
): Approval.Challenge => ({
  ...Approval.issue({
    id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}` as ChallengeId,
    subjectKind: "mandate",
    subjectId: subject,
    customerId: customer as CustomerId,
    environment: "live",
    codeHash: "hash",
    now: at(seconds)
  }),
  attempts: wrong + (used ? 1 : 0),
  usedAt: used ? at(seconds + 1) : null
})

const to = (subject: string, customer: string) => ({
  subjectKind: "mandate" as const,
  subjectId: subject,
  customerId: customer as CustomerId
})

/** Reference counts, written independently of `Approval`: what lies in (now - window, now]. */
const within = (cs: ReadonlyArray<Approval.Challenge>, now: number, windowSeconds: number) =>
  cs.filter((c) => {
    const created = DateTime.toEpochMillis(c.createdAt) / 1000 - DateTime.toEpochMillis(t0) / 1000
    return created > now - windowSeconds && created <= now
  })
const wrongOf = (cs: ReadonlyArray<Approval.Challenge>) =>
  cs.reduce((n, c) => n + c.attempts - (c.usedAt === null ? 0 : 1), 0)

const history = fc.array(
  fc.record({
    subject: fc.constantFrom(...subjects),
    customer: fc.constantFrom(...customers),
    // Mostly clustered in two hours, so the caps are reached; some spread over a day and more.
    seconds: fc.oneof(
      { arbitrary: fc.integer({ min: 0, max: 2 * hour }), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 30 * hour }), weight: 1 }
    ),
    wrong: fc.integer({ min: 0, max: Approval.MaxAttempts }),
    used: fc.boolean()
  }),
  { maxLength: 60, size: "max" }
)

/** When a decision is taken: mostly inside the cluster of `history`. */
const moment = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 2 * hour }), weight: 3 },
  { arbitrary: fc.integer({ min: 0, max: 30 * hour }), weight: 1 }
)

describe("Approval caps", () => {
  it("the numbers: 5 codes per subject and 10 per customer an hour; 10 and 20 wrong guesses a day", () => {
    expect([Approval.IssueWindowMinutes, Approval.MaxCodesPerSubject, Approval.MaxCodesPerCustomer]).toEqual([
      60, 5, 10
    ])
    expect([
      Approval.GuessWindowMinutes,
      Approval.MaxWrongGuessesPerSubject,
      Approval.MaxWrongGuessesPerCustomer
    ]).toEqual([24 * 60, 10, 20])
  })

  it("issuing: the sixth code for a subject within the hour is refused until the first leaves the window", () => {
    const five = [0, 60, 120, 180, 240].map((s, i) => made(i, "m1", "c1", s))
    expect(Either.isRight(Approval.decideIssue(five.slice(0, 4), to("m1", "c1"), at(300)))).toBe(true)
    expect(Approval.decideIssue(five, to("m1", "c1"), at(300))).toEqual(
      Either.left({ limit: "codes", scope: "subject", retryAfterSeconds: hour - 300 })
    )
    expect(Either.isLeft(Approval.decideIssue(five, to("m1", "c1"), at(hour - 1)))).toBe(true)
    expect(Either.isRight(Approval.decideIssue(five, to("m1", "c1"), at(hour)))).toBe(true)
    // Another subject of the same customer is not held by this subject's cap.
    expect(Either.isRight(Approval.decideIssue(five, to("m2", "c1"), at(300)))).toBe(true)
  })

  it("issuing: the customer's eleventh code within the hour is refused, whatever the subject", () => {
    const ten = Array.from({ length: 10 }, (_, i) => made(i, subjects[i % 3]!, "c1", i * 60))
    expect(Approval.decideIssue(ten, to("m9", "c1"), at(600))).toEqual(
      Either.left({ limit: "codes", scope: "customer", retryAfterSeconds: hour - 600 })
    )
    expect(Either.isRight(Approval.decideIssue(ten, to("m9", "c2"), at(600)))).toBe(true)
  })

  it("guessing: the subject's eleventh wrong guess of the day is refused, and so is the right code", () => {
    const two = [made(0, "m1", "c1", 0, 5), made(1, "m1", "c1", 10 * minute, 4)]
    const current = made(2, "m1", "c1", 20 * minute, 1)
    expect(Approval.decideGuess([...two, current], current, at(21 * minute))).toEqual(
      Either.left({ limit: "guesses", scope: "subject", retryAfterSeconds: 24 * hour - 21 * minute })
    )
    const fewer = { ...current, attempts: 0 }
    expect(Either.isRight(Approval.decideGuess([...two, fewer], fewer, at(21 * minute)))).toBe(true)
    // A right guess that used a code is not a wrong one.
    const used = made(2, "m1", "c1", 20 * minute, 0, true)
    expect(Either.isRight(Approval.decideGuess([...two, used], used, at(21 * minute)))).toBe(true)
  })

  it("guessing: twenty wrong guesses of one customer across subjects hold every subject", () => {
    // 7 + 7 + 6 = 20 wrong in all, under 10 on any subject.
    const spread = ["m1", "m2", "m3"].flatMap((s, i) => [
      made(2 * i, s, "c1", i * hour, 4),
      made(2 * i + 1, s, "c1", i * hour + 600, i === 2 ? 2 : 3)
    ])
    const current = made(9, "m9", "c1", 3 * hour)
    expect(Approval.decideGuess([...spread, current], current, at(3 * hour))).toEqual(
      Either.left({ limit: "guesses", scope: "customer", retryAfterSeconds: 21 * hour })
    )
    // 19 is under the cap; another customer is not held at all.
    const nineteen = [{ ...spread[5]!, attempts: 1 }, ...spread.slice(0, 5)]
    expect(Either.isRight(Approval.decideGuess([...nineteen, current], current, at(3 * hour)))).toBe(true)
    const other = made(10, "m9", "c2", 3 * hour)
    expect(Either.isRight(Approval.decideGuess([...spread, other], other, at(3 * hour)))).toBe(true)
  })

  it("for any history: a code is issued exactly when both counts of the last hour are under their caps", () => {
    fc.assert(
      fc.property(
        history,
        fc.constantFrom(...subjects),
        fc.constantFrom(...customers),
        moment,
        (h, subject, customer, now) => {
          const cs = h.map((x, i) => made(i, x.subject, x.customer, x.seconds))
          const window = within(cs, now, hour)
          const underCaps =
            window.filter((c) => c.subjectId === subject).length < Approval.MaxCodesPerSubject &&
            window.filter((c) => c.customerId === customer).length < Approval.MaxCodesPerCustomer
          const decided = Approval.decideIssue(
            cs.filter((c) => DateTime.lessThanOrEqualTo(c.createdAt, at(now))),
            to(subject, customer),
            at(now)
          )
          expect(Either.isRight(decided)).toBe(underCaps)
        }
      )
    )
  })

  it("for any history: a guess is checked exactly when both wrong-guess counts of the last day are under their caps", () => {
    fc.assert(
      fc.property(
        history,
        fc.integer({ min: 0, max: 39 }),
        fc.integer({ min: 0, max: 5 * minute }),
        (h, k, later) => {
          fc.pre(h.length > 0)
          const cs = h.map((x, i) => made(i, x.subject, x.customer, x.seconds, x.wrong, x.used))
          const current = cs[k % cs.length]!
          const now =
            DateTime.toEpochMillis(current.createdAt) / 1000 - DateTime.toEpochMillis(t0) / 1000 + later
          const window = within(cs, now, 24 * hour)
          const underCaps =
            wrongOf(window.filter((c) => c.subjectId === current.subjectId)) <
              Approval.MaxWrongGuessesPerSubject &&
            wrongOf(window.filter((c) => c.customerId === current.customerId)) <
              Approval.MaxWrongGuessesPerCustomer
          const decided = Approval.decideGuess(
            cs.filter((c) => DateTime.lessThanOrEqualTo(c.createdAt, at(now))),
            current,
            at(now)
          )
          expect(Either.isRight(decided)).toBe(underCaps)
        }
      )
    )
  })

  it("Retry-After is exact: a second earlier is still refused, at it the same request is allowed", () => {
    let refused = 0
    fc.assert(
      fc.property(history, fc.constantFrom(...subjects), moment, (h, subject, now) => {
        const cs = h
          .map((x, i) => made(i, x.subject, x.customer, x.seconds, x.wrong, x.used))
          .filter((c) => DateTime.lessThanOrEqualTo(c.createdAt, at(now)))
        const issue = Approval.decideIssue(cs, to(subject, "c1"), at(now))
        if (Either.isLeft(issue)) {
          refused++
          const wait = issue.left.retryAfterSeconds
          expect(wait).toBeGreaterThanOrEqual(1)
          expect(Either.isLeft(Approval.decideIssue(cs, to(subject, "c1"), at(now + wait - 1)))).toBe(true)
          expect(Either.isRight(Approval.decideIssue(cs, to(subject, "c1"), at(now + wait)))).toBe(true)
        }
        const current = made(99, subject, "c1", now)
        const guess = Approval.decideGuess([...cs, current], current, at(now))
        if (Either.isLeft(guess)) {
          refused++
          const wait = guess.left.retryAfterSeconds
          expect(Either.isLeft(Approval.decideGuess([...cs, current], current, at(now + wait - 1)))).toBe(
            true
          )
          expect(Either.isRight(Approval.decideGuess([...cs, current], current, at(now + wait)))).toBe(true)
        }
      })
    )
    // The property said something: some requests were refused.
    expect(refused).toBeGreaterThan(0)
  })

  it("simulated attack: issuing and guessing at will never passes a cap, and only a cap refuses", () => {
    // Few subjects and quick actions, mostly guesses: an attacker hammering, so every cap is met.
    const action = fc.record({
      subject: fc.constantFrom("m1", "m2", "m3"),
      customer: fc.constantFrom(...customers),
      issue: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
      right: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
      wait: fc.oneof(
        { arbitrary: fc.integer({ min: 0, max: 30 }), weight: 20 },
        { arbitrary: fc.integer({ min: 0, max: 3 * hour }), weight: 1 }
      )
    })
    // Counted across runs, so the property is known to have met both kinds of cap.
    const refusals = { codes: 0, guesses: 0 }
    fc.assert(
      fc.property(fc.array(action, { minLength: 50, maxLength: 300 }), (actions) => {
        const all = new Map<string, Approval.Challenge>()
        let now = 0
        let n = 0
        for (const a of actions) {
          now += a.wait
          const cs = Array.from(all.values())
          const inWindow = (minutes: number) => within(cs, now, minutes * 60)
          if (a.issue) {
            const window = inWindow(Approval.IssueWindowMinutes)
            const subjectCount = window.filter((c) => c.subjectId === a.subject).length
            const customerCount = window.filter((c) => c.customerId === a.customer).length
            const decided = Approval.decideIssue(cs, to(a.subject, a.customer), at(now))
            expect(Either.isLeft(decided)).toBe(
              subjectCount >= Approval.MaxCodesPerSubject || customerCount >= Approval.MaxCodesPerCustomer
            )
            if (Either.isLeft(decided)) refusals.codes++
            else {
              const c = made(n++, a.subject, a.customer, now)
              all.set(c.id, c)
              expect(subjectCount + 1).toBeLessThanOrEqual(Approval.MaxCodesPerSubject)
              expect(customerCount + 1).toBeLessThanOrEqual(Approval.MaxCodesPerCustomer)
            }
          } else {
            // The attacker guesses on the newest code of the subject for the customer.
            const target = cs.filter((c) => c.subjectId === a.subject && c.customerId === a.customer).pop()
            if (target === undefined) continue
            const window = inWindow(Approval.GuessWindowMinutes)
            const reached =
              wrongOf(window.filter((c) => c.subjectId === a.subject)) >=
                Approval.MaxWrongGuessesPerSubject ||
              wrongOf(window.filter((c) => c.customerId === a.customer)) >=
                Approval.MaxWrongGuessesPerCustomer
            const decided = Approval.decideGuess(cs, target, at(now))
            expect(Either.isLeft(decided)).toBe(reached)
            if (Either.isLeft(decided)) {
              refusals.guesses++
              continue
            }
            const r = Approval.verify(target, a.right, at(now))
            all.set(target.id, r.challenge)
            const after = within(Array.from(all.values()), now, Approval.GuessWindowMinutes * 60)
            expect(wrongOf(after.filter((c) => c.subjectId === a.subject))).toBeLessThanOrEqual(
              Approval.MaxWrongGuessesPerSubject
            )
            expect(wrongOf(after.filter((c) => c.customerId === a.customer))).toBeLessThanOrEqual(
              Approval.MaxWrongGuessesPerCustomer
            )
          }
        }
      })
    )
    expect(refusals.codes).toBeGreaterThan(0)
    expect(refusals.guesses).toBeGreaterThan(0)
  })
})

describe("Approval redaction", () => {
  it("a code is spent once used, locked or expired, and its notice then says which", () => {
    const c = challenge()
    expect(Approval.needsRedaction(c, at(299))).toBe(false)
    expect(Approval.needsRedaction(c, at(300))).toBe(true)
    expect(Approval.redactedBody(c)).toBe("Your code expired unused.")
    const used = Approval.verify(c, true, at(1)).challenge
    expect(Approval.needsRedaction(used, at(1))).toBe(true)
    expect(Approval.redactedBody(used)).toBe("Your code was used.")
    let locked = c
    for (let i = 0; i < Approval.MaxAttempts; i++) locked = Approval.verify(locked, false, at(i)).challenge
    expect(Approval.needsRedaction(locked, at(5))).toBe(true)
    expect(Approval.redactedBody(locked)).toBe("Your code was locked after too many incorrect tries.")
    expect(Approval.needsRedaction({ ...used, redactedAt: at(1) }, at(400))).toBe(false)
    // A wrong guess alone leaves the code usable.
    expect(Approval.needsRedaction(Approval.verify(c, false, at(1)).challenge, at(1))).toBe(false)
  })

  it("the hashed text binds the code to its challenge; notices have ids derived from it", () => {
    const c = challenge()
    expect(Approval.hashedText(c.id, "123456")).toBe(`${c.id}:123456`)
    expect(Approval.noticeId(c.id)).toBe(`code:${c.id}`)
  })
})
