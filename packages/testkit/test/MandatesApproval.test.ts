/**
 * A customer's approval of a live mandate in memory: approving and declining with the one-time code, wrong
 * and expired codes, the 24 hour link, and phones or challenges that are not the mandate's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Mandates, Notifications, Store, Wallet } from "@laari/core"
import { Effect } from "effect"
import { ControllableClock } from "../src/ControllableClock.js"
import { Seed } from "../src/Seed.js"
import {
  world,
  terms,
  merchant,
  liveTenant,
  eventsOf,
  second,
  minute,
  iso,
  ids
} from "./support/MandateWorld.js"

describe("approval", () => {
  /** A live mandate awaiting approval and a live customer with a wallet. */
  const pending = Effect.gen(function* () {
    const seed = yield* Seed
    const mandates = yield* Mandates.Mandates
    const m = yield* merchant({ features: { mandatesLive: true } })
    const customer = yield* seed.customer({ environment: "live", phone: "+960 7771234", balance: 50_000 })
    const mandate = yield* mandates.create(liveTenant(m), terms({ perChargeCap: 20_000 }))
    return { merchant: m, tenant: liveTenant(m), mandate, customer }
  })

  /** Asks for a code and reads it from the customer's notifications. */
  const askCode = (mandateId: string, customer: Store.Customer) =>
    Effect.gen(function* () {
      const challenge = yield* (yield* Mandates.Mandates).requestApproval(mandateId, customer.phone)
      const [notice] = yield* (yield* Notifications.Notifications).list(customer.id)
      expect(notice).toMatchObject({
        kind: "one_time_code",
        data: { challenge_id: challenge.id, subject_id: mandateId }
      })
      const code = String(notice!.data.code)
      expect(code).toMatch(/^\d{6}$/)
      expect(notice!.body).toContain(code)
      return { challenge, code }
    })

  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0")

  it.effect("approve: ACTIVE, bound to the customer who confirmed, with mandate.activated", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const mandates = yield* Mandates.Mandates
      expect((yield* mandates.forApproval(p.mandate.id)).status).toBe("INITIATED")
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      const approved = yield* mandates.approve(p.mandate.id, challenge.id, code)
      expect(approved).toMatchObject({ status: "ACTIVE", customerId: p.customer.id })
      expect(iso(approved.approvedAt)).toBe("2026-03-31T10:00:00.000Z")
      expect((yield* eventsOf(p.merchant.id)).map((e) => e.envelope.type)).toEqual(["mandate.activated"])
      const [notice] = yield* (yield* Notifications.Notifications).list(p.customer.id)
      expect(notice).toMatchObject({ kind: "mandate.approved", data: { mandate_id: p.mandate.id } })
      // The code is used up.
      const reused = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(reused).toBeInstanceOf(Mandates.MandateNotPending)
      // Charges now come out of that customer's wallet.
      yield* mandates.charge(p.tenant, p.mandate.id, { amount: 20_000 })
      expect((yield* (yield* Wallet.Wallet).payer(p.customer.id))?.balance).toBe(30_000)
      expect(ids(yield* mandates.listForCustomer(p.customer.id))).toEqual([p.mandate.id])
    }).pipe(world())
  )

  it.effect("decline: DECLINED with mandate.declined, and no longer awaiting approval", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const mandates = yield* Mandates.Mandates
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      const declined = yield* mandates.decline(p.mandate.id, challenge.id, code)
      expect(declined.status).toBe("DECLINED")
      expect(iso(declined.declinedAt)).toBe("2026-03-31T10:00:00.000Z")
      expect((yield* eventsOf(p.merchant.id)).map((e) => e.envelope.type)).toEqual(["mandate.declined"])
      const late = yield* Effect.flip(mandates.requestApproval(p.mandate.id, p.customer.phone))
      expect(late).toMatchObject({ _tag: "MandateNotPending", message: "Mandate is not awaiting approval" })
    }).pipe(world())
  )

  it.effect("wrong codes count attempts, and the fifth locks the challenge", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const mandates = yield* Mandates.Mandates
      const challenges = yield* Store.ChallengesStore
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      for (let attempt = 1; attempt <= 4; attempt++) {
        const refused = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, wrong(code)))
        expect(refused).toMatchObject({ _tag: "ApprovalRefused", reason: "incorrect" })
        expect((yield* challenges.lock(challenge.id))?.attempts).toBe(attempt)
      }
      const fifth = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, wrong(code)))
      expect(fifth).toMatchObject({ _tag: "ApprovalRefused", reason: "locked" })
      const right = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(right).toMatchObject({ _tag: "ApprovalRefused", reason: "locked" })
      expect((yield* challenges.lock(challenge.id))?.attempts).toBe(5)
      expect((yield* mandates.forApproval(p.mandate.id)).status).toBe("INITIATED")
      // A new code works.
      const fresh = yield* askCode(p.mandate.id, p.customer)
      expect((yield* mandates.approve(p.mandate.id, fresh.challenge.id, fresh.code)).status).toBe("ACTIVE")
    }).pipe(world())
  )

  it.effect("a code expires after five minutes", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      yield* clock.advance("5 minutes")
      const refused = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(refused).toMatchObject({ _tag: "ApprovalRefused", reason: "expired" })
      expect((yield* mandates.forApproval(p.mandate.id)).status).toBe("INITIATED")
    }).pipe(world())
  )

  it.effect("a code a second short of five minutes still works", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const clock = yield* ControllableClock
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      yield* clock.advance(5 * minute - second)
      expect((yield* (yield* Mandates.Mandates).approve(p.mandate.id, challenge.id, code)).status).toBe(
        "ACTIVE"
      )
    }).pipe(world())
  )

  it.effect("after the 24 hour link the mandate is not pending: the link has expired", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      // Before a sweep has caught up, the link itself says it has expired.
      yield* clock.skip("24 hours")
      const refused = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(refused).toMatchObject({ _tag: "MandateNotPending", message: "The approval link has expired" })
      const asked = yield* Effect.flip(mandates.requestApproval(p.mandate.id, p.customer.phone))
      expect(asked).toMatchObject({ _tag: "MandateNotPending", message: "The approval link has expired" })
      // Once the sweep runs, the mandate is EXPIRED.
      yield* clock.runDue
      expect((yield* mandates.forApproval(p.mandate.id)).status).toBe("EXPIRED")
    }).pipe(world())
  )

  it.effect("a phone without a wallet in the mandate's environment, or a foreign challenge, is refused", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const seed = yield* Seed
      const mandates = yield* Mandates.Mandates
      const testOnly = yield* seed.customer({ environment: "test", phone: "+960 7009999" })
      for (const phone of ["+960 0000000", testOnly.phone])
        expect(yield* Effect.flip(mandates.requestApproval(p.mandate.id, phone))).toBeInstanceOf(
          Mandates.CustomerNotFound
        )
      const other = yield* mandates.create(p.tenant, terms())
      const { challenge, code } = yield* askCode(other.id, p.customer)
      const foreign = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(foreign._tag).toBe("ChallengeNotFound")
      expect(yield* Effect.flip(mandates.forApproval("00000000-0000-4000-8000-000000000000"))).toBeInstanceOf(
        Mandates.MandateNotFound
      )
    }).pipe(world())
  )
})
