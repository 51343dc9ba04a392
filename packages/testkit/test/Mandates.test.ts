/**
 * Mandates in memory: creating one (its validation, sandbox and live), revoking, the expiry sweep and the
 * list. Charging is in MandatesCharges.test.ts, the customer's approval in MandatesApproval.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Mandate, Mandates, Notifications, Store } from "@laari/core"
import { DateTime, Effect } from "effect"
import fc from "fast-check"
import * as Arbitraries from "../src/Arbitraries.js"
import { ControllableClock } from "../src/ControllableClock.js"
import * as MemorySeed from "../src/MemorySeed.js"
import { Seed } from "../src/Seed.js"
import {
  world,
  terms,
  merchant,
  testTenant,
  liveTenant,
  activeMandate,
  eventsOf,
  second,
  hour,
  iso,
  ids
} from "./support/MandateWorld.js"

describe("create", () => {
  it.effect("a sandbox mandate is ACTIVE at once, bound to the sandbox payer, with mandate.activated", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const now = yield* DateTime.now
      const created = yield* mandates.create(testTenant(m), terms({ periodCap: 100_000, period: "MONTH" }))
      expect(created).toMatchObject({
        status: "ACTIVE",
        customerId: m.sandboxPayer,
        environment: "test",
        periodKey: null,
        periodCharged: 0,
        period: "MONTH"
      })
      expect(iso(created.approvedAt)).toBe(iso(now))
      expect(iso(created.setupExpiresAt)).toBe("2026-04-01T10:00:00.000Z")
      expect(iso(created.expiresAt)).toBe("2027-03-31T10:00:00.000Z")
      const events = yield* eventsOf(m.id)
      expect(events.map((e) => e.envelope.type)).toEqual(["mandate.activated"])
      expect(events[0]!.envelope).toMatchObject({
        livemode: false,
        data: { object: { id: created.id, status: "ACTIVE" } }
      })
      expect((yield* mandates.get(testTenant(m), created.reference)).id).toBe(created.id)
      expect((yield* mandates.get(testTenant(m), created.id)).reference).toBe(created.reference)
    }).pipe(world())
  )

  it.effect("a live mandate is refused until mandates are enabled, then INITIATED and unbound", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const refused = yield* Effect.flip(mandates.create(liveTenant(m), terms()))
      expect(refused).toBeInstanceOf(Mandates.MandatesNotEnabled)
      expect(yield* mandates.list(liveTenant(m), { limit: 25, offset: 0 })).toEqual([])

      yield* MemorySeed.updateMerchant(m.id, { features: { mandatesLive: true } })
      const created = yield* mandates.create(liveTenant(m), terms())
      expect(created).toMatchObject({
        status: "INITIATED",
        customerId: null,
        approvedAt: null,
        environment: "live"
      })
      expect(yield* eventsOf(m.id)).toEqual([])
    }).pipe(world())
  )

  const now = DateTime.unsafeMake("2026-03-31T10:00:00Z")
  const invalid: ReadonlyArray<readonly [string, Partial<Mandate.Terms>, string]> = [
    ["an empty reference", { reference: "" }, "reference"],
    ["a blank reference", { reference: "   " }, "reference"],
    ["a reference of 256 characters", { reference: "r".repeat(256) }, "reference"],
    ["an empty title", { title: "" }, "title"],
    ["a title of 256 characters", { title: "t".repeat(256) }, "title"],
    ["a description of 256 characters", { description: "d".repeat(256) }, "description"],
    ["a per-charge cap of 99", { perChargeCap: 99 }, "perChargeCap"],
    ["a per-charge cap of 500001", { perChargeCap: 500_001 }, "perChargeCap"],
    ["a fractional per-charge cap", { perChargeCap: 150.5 }, "perChargeCap"],
    ["a period cap below the per-charge cap", { periodCap: 49_999, period: "MONTH" }, "periodCap"],
    ["a period cap without a period", { periodCap: 100_000 }, "period"],
    ["an ftp return URL", { returnUrl: "ftp://shop.example/done" }, "returnUrl"],
    ["a relative return URL", { returnUrl: "/done" }, "returnUrl"],
    ["an expiry in the past", { expiresAt: DateTime.unsafeMake("2026-03-31T09:59:59Z") }, "expiresAt"],
    ["an expiry of now", { expiresAt: now }, "expiresAt"],
    [
      "an expiry 365 days and a second away",
      { expiresAt: DateTime.add(now, { days: 365, seconds: 1 }) },
      "expiresAt"
    ]
  ]
  it.effect.each(invalid)("%s is InvalidRequest naming the field", ([, patch, field]) =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const refused = yield* Effect.flip(mandates.create(testTenant(m), terms(patch)))
      expect(refused._tag).toBe("InvalidRequest")
      if (refused._tag !== "InvalidRequest") return
      expect(refused.errors.map((e) => e.field)).toEqual([field])
      expect(refused.message).toBe(`${field}: ${refused.errors[0]!.message}`)
      expect(yield* mandates.list(testTenant(m), { limit: 25, offset: 0 })).toEqual([])
    }).pipe(world())
  )

  it.effect("the limits themselves are accepted", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const accepted: ReadonlyArray<Partial<Mandate.Terms>> = [
        { perChargeCap: 100 },
        { perChargeCap: 500_000, periodCap: 500_000, period: "MONTH" },
        { reference: "r".repeat(255), title: "t".repeat(255), description: "d".repeat(255) },
        { expiresAt: DateTime.add(now, { days: 365 }) },
        { expiresAt: DateTime.add(now, { seconds: 1 }) },
        { returnUrl: "http://localhost:3000/done" },
        { returnUrl: "https://shop.example/return?order=1" }
      ]
      for (const patch of accepted) {
        const created = yield* mandates.create(testTenant(m), terms(patch))
        expect(created.status).toBe("ACTIVE")
        if (patch.expiresAt) expect(iso(created.expiresAt)).toBe(iso(patch.expiresAt))
      }
    }).pipe(world())
  )

  it.effect("every generated valid terms are accepted and kept as sent", () =>
    Effect.gen(function* () {
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(Arbitraries.terms(now), (t) =>
            Effect.gen(function* () {
              const m = yield* merchant()
              const created = yield* (yield* Mandates.Mandates).create(testTenant(m), t)
              expect(created).toMatchObject({
                reference: t.reference,
                title: t.title,
                description: t.description,
                perChargeCap: t.perChargeCap,
                periodCap: t.periodCap,
                period: t.period,
                returnUrl: t.returnUrl,
                status: "ACTIVE"
              })
              if (t.expiresAt !== null) expect(iso(created.expiresAt)).toBe(iso(t.expiresAt))
            }).pipe(world(), Effect.runPromise)
          ),
          { numRuns: 50 }
        )
      )
    })
  )

  it.effect("a duplicate reference is refused; the same reference elsewhere is fine", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant({ features: { mandatesLive: true } })
      const other = yield* merchant()
      const first = yield* mandates.create(testTenant(m), terms({ reference: "order-1" }))
      const refused = yield* Effect.flip(mandates.create(testTenant(m), terms({ reference: "order-1" })))
      expect(refused).toBeInstanceOf(Mandates.MandateReferenceTaken)
      expect(ids(yield* mandates.list(testTenant(m), { limit: 25, offset: 0 }))).toEqual([first.id])
      // Only the first one's event: the refused create left nothing behind.
      expect((yield* eventsOf(m.id)).map((e) => e.envelope.type)).toEqual(["mandate.activated"])
      yield* mandates.create(testTenant(other), terms({ reference: "order-1" }))
      yield* mandates.create(liveTenant(m), terms({ reference: "order-1" }))
    }).pipe(world())
  )
})

describe("revoke", () => {
  it.effect("an ACTIVE mandate is revoked at once, with mandate.revoked and a notice to the customer", () =>
    Effect.gen(function* () {
      const ctx = yield* activeMandate()
      const mandates = yield* Mandates.Mandates
      const revoked = yield* mandates.revoke(ctx.tenant, ctx.mandate.reference)
      expect(revoked).toMatchObject({ status: "REVOKED", revokedBy: "MERCHANT" })
      expect(iso(revoked.revokedAt)).toBe("2026-03-31T10:00:00.000Z")
      expect((yield* mandates.get(ctx.tenant, ctx.mandate.id)).status).toBe("REVOKED")
      const events = yield* eventsOf(ctx.merchant.id)
      expect(events.map((e) => e.envelope.type)).toEqual(["mandate.activated", "mandate.revoked"])
      expect(events[1]!.envelope.data.object).toMatchObject({ status: "REVOKED", revoked_by: "MERCHANT" })
      const [notice] = yield* (yield* Notifications.Notifications).list(ctx.payer)
      expect(notice).toMatchObject({ kind: "mandate.revoked", data: { mandate_id: ctx.mandate.id } })
    }).pipe(world())
  )

  it.effect("a SUSPENDED mandate can be revoked", () =>
    Effect.gen(function* () {
      const ctx = yield* activeMandate()
      const mandates = yield* Mandates.Mandates
      expect((yield* mandates.suspend(ctx.mandate.id)).status).toBe("SUSPENDED")
      expect((yield* mandates.revoke(ctx.tenant, ctx.mandate.id)).status).toBe("REVOKED")
    }).pipe(world())
  )

  it.effect("INITIATED, REVOKED, EXPIRED and DECLINED mandates are MandateNotRevocable", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant({ features: { mandatesLive: true } })
      const customer = yield* (yield* Seed).customer({ environment: "live", phone: "+960 7000001" })
      const initiated = yield* mandates.create(liveTenant(m), terms())
      const revoked = yield* mandates.create(testTenant(m), terms())
      yield* mandates.revoke(testTenant(m), revoked.id)
      const declined = yield* mandates.create(liveTenant(m), terms())
      const challenge = yield* mandates.requestApproval(declined.id, customer.phone)
      const [notice] = yield* (yield* Notifications.Notifications).list(customer.id)
      yield* mandates.decline(declined.id, challenge.id, String(notice!.data.code))
      const expired = yield* mandates.create(
        testTenant(m),
        terms({ expiresAt: DateTime.unsafeMake("2026-04-01T00:00:00Z") })
      )
      yield* clock.advanceTo(DateTime.unsafeMake("2026-04-01T00:00:00Z"))

      for (const [tenant, mandate, status] of [
        [liveTenant(m), initiated, "INITIATED"],
        [testTenant(m), revoked, "REVOKED"],
        [liveTenant(m), declined, "DECLINED"],
        [testTenant(m), expired, "EXPIRED"]
      ] as const) {
        expect((yield* mandates.get(tenant, mandate.id)).status).toBe(status)
        const refused = yield* Effect.flip(mandates.revoke(tenant, mandate.id))
        expect(refused).toBeInstanceOf(Mandates.MandateNotRevocable)
        expect(refused.message).toBe("Mandate cannot be revoked")
        expect((yield* mandates.get(tenant, mandate.id)).status).toBe(status)
      }
    }).pipe(world())
  )

  it.effect("the customer revokes from the wallet app; nobody else can that way", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const ctx = yield* activeMandate()
      const mandates = yield* Mandates.Mandates
      const stranger = yield* seed.customer({ environment: "test", phone: "+960 7000002" })
      const refused = yield* Effect.flip(mandates.revokeAsCustomer(stranger.id, ctx.mandate.id))
      expect(refused).toBeInstanceOf(Mandates.MandateNotFound)
      expect(ids(yield* mandates.listForCustomer(ctx.payer))).toEqual([ctx.mandate.id])
      const revoked = yield* mandates.revokeAsCustomer(ctx.payer, ctx.mandate.id)
      expect(revoked).toMatchObject({ status: "REVOKED", revokedBy: "CUSTOMER" })
      const again = yield* Effect.flip(mandates.revokeAsCustomer(ctx.payer, ctx.mandate.id))
      expect(again).toBeInstanceOf(Mandates.MandateNotRevocable)
    }).pipe(world())
  )
})

describe("expiry sweep", () => {
  it.effect(
    "the clock's advance expires a lapsed INITIATED mandate at 24 hours, and an ACTIVE one at expiresAt",
    () =>
      Effect.gen(function* () {
        const clock = yield* ControllableClock
        const mandates = yield* Mandates.Mandates
        const m = yield* merchant({ features: { mandatesLive: true } })
        const initiated = yield* mandates.create(liveTenant(m), terms())
        const active = yield* mandates.create(
          testTenant(m),
          terms({ expiresAt: DateTime.unsafeMake("2026-04-10T10:00:00Z") })
        )
        const untouched = yield* mandates.create(testTenant(m), terms())

        yield* clock.advance(24 * hour - second)
        expect((yield* mandates.get(liveTenant(m), initiated.id)).status).toBe("INITIATED")
        yield* clock.advance("1 second")
        const lapsed = yield* mandates.get(liveTenant(m), initiated.id)
        expect(lapsed.status).toBe("EXPIRED")
        // The sweep ran at the due moment itself.
        expect(iso(lapsed.expiredAt)).toBe(iso(lapsed.setupExpiresAt))

        // Far past the lifetime in one call: the job still runs at expiresAt.
        yield* clock.advance("30 days")
        const ended = yield* mandates.get(testTenant(m), active.id)
        expect(ended.status).toBe("EXPIRED")
        expect(iso(ended.expiredAt)).toBe("2026-04-10T10:00:00.000Z")
        expect((yield* mandates.get(testTenant(m), untouched.id)).status).toBe("ACTIVE")
        expect(iso(yield* clock.now)).toBe("2026-05-01T10:00:00.000Z")
        // Expiry is silent: no webhook for it in the spec.
        expect((yield* eventsOf(m.id)).map((e) => e.envelope.type)).toEqual([
          "mandate.activated",
          "mandate.activated"
        ])
      }).pipe(world())
  )

  it.effect("sweep works through more due mandates than one batch", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant({ features: { mandatesLive: true } })
      yield* Effect.forEach(Array.from({ length: 7 }), () => mandates.create(liveTenant(m), terms()))
      yield* clock.skip("25 hours")
      expect(yield* mandates.sweep(3)).toBe(7)
      const all = yield* mandates.list(liveTenant(m), { limit: 100, offset: 0 })
      expect(all.map((x) => x.status)).toEqual(Array(7).fill("EXPIRED"))
      expect(yield* mandates.sweep(3)).toBe(0)
    }).pipe(world())
  )
})

describe("list", () => {
  it.effect("lists the tenant's mandates newest first, with filters and paging", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const made: Array<Mandate.Mandate> = []
      for (let i = 0; i < 4; i++) {
        made.push(yield* mandates.create(testTenant(m), terms()))
        yield* clock.advance("1 minute")
      }
      yield* mandates.revoke(testTenant(m), made[1]!.id)
      const list = (f: Partial<Store.MandateFilter>) =>
        Effect.map(mandates.list(testTenant(m), { limit: 25, offset: 0, ...f }), ids)
      expect(yield* list({})).toEqual(ids([...made].reverse()))
      expect(yield* list({ status: "REVOKED" })).toEqual([made[1]!.id])
      expect(yield* list({ reference: made[2]!.reference })).toEqual([made[2]!.id])
      expect(yield* list({ limit: 2, offset: 1 })).toEqual([made[2]!.id, made[1]!.id])
    }).pipe(world())
  )
})
