/**
 * The event log part of the store contract: what the outbox recorded, read back newest first, filtered
 * by owner, type and time, paged, and one event by id for its tenant only, each as the exact text of
 * its sealed envelope. `StoreContract.suite` runs it on every adapter; every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { EventLog, Events, type Ids } from "@laari/core"
import { type DateTime, Effect } from "effect"
import { type It, T0, freshMerchant, newMandate, plus, second, tenantOf, uuid } from "../support/Helpers.js"

/** A draft of `type` about a fresh mandate of `tenant`, created at `at`. */
const draft = (tenant: Ids.Tenant, type: Events.Type, at: DateTime.Utc) =>
  Effect.gen(function* () {
    const m = yield* newMandate(tenant)
    return Events.make({
      id: `evt_${(yield* uuid).replaceAll("-", "")}`,
      type,
      merchantId: tenant.merchantId,
      environment: tenant.environment,
      now: at,
      object: Events.mandateObject(m)
    })
  })

export const tests = (it: It): void => {
  describe("event log", () => {
    it.effect("lists a merchant's events newest first, by environment, type and time, paged", () =>
      Effect.gen(function* () {
        const outbox = yield* Events.Outbox
        const log = yield* EventLog.EventLog
        const tenant = tenantOf(yield* freshMerchant())
        const live: Ids.Tenant = { ...tenant, environment: "live" }
        const a = yield* draft(tenant, "mandate.activated", T0)
        const b = yield* draft(tenant, "mandate.revoked", plus(T0, 2 * second))
        const c = yield* draft(tenant, "mandate.activated", plus(T0, 4 * second))
        const d = yield* draft(live, "mandate.activated", plus(T0, 6 * second))
        for (const e of [a, b, c, d]) yield* outbox.append(e)
        const ids = (list: ReadonlyArray<EventLog.Stored>) => list.map((e) => e.id)

        const mine = yield* log.list({ merchantId: tenant.merchantId, environment: "test", limit: 10 })
        expect(ids(mine)).toEqual([c.id, b.id, a.id])
        // Exactly the sealed envelope's text (the bytes signed and sent), with its owner.
        expect(mine[2]!.text).toBe(JSON.stringify(Events.seal(a, 1).envelope))
        expect(mine[2]).toMatchObject({
          merchantId: tenant.merchantId,
          environment: "test",
          subject: a.subject
        })
        expect(EventLog.parsed(mine[2]!).envelope).toEqual(JSON.parse(mine[2]!.text))
        expect(EventLog.arrayText(mine)).toBe(`[${mine.map((e) => e.text).join(",")}]`)

        expect(ids(yield* log.list({ merchantId: tenant.merchantId, limit: 10 }))).toEqual([
          d.id,
          c.id,
          b.id,
          a.id
        ])
        expect(
          ids(
            yield* log.list({
              merchantId: tenant.merchantId,
              environment: "test",
              type: "mandate.activated",
              limit: 10
            })
          )
        ).toEqual([c.id, a.id])
        expect(
          ids(
            yield* log.list({
              merchantId: tenant.merchantId,
              environment: "test",
              createdFrom: plus(T0, 2 * second),
              limit: 10
            })
          )
        ).toEqual([c.id, b.id])
        expect(
          ids(yield* log.list({ merchantId: tenant.merchantId, environment: "test", limit: 1, offset: 1 }))
        ).toEqual([b.id])
        // Another merchant's, and a merchant id that is no UUID: none.
        const other = tenantOf(yield* freshMerchant())
        expect(yield* log.list({ merchantId: other.merchantId, limit: 10 })).toEqual([])
        expect(yield* log.list({ merchantId: "not-a-uuid", limit: 10 })).toEqual([])
      })
    )

    it.effect("finds one event by id, the tenant's only", () =>
      Effect.gen(function* () {
        const outbox = yield* Events.Outbox
        const log = yield* EventLog.EventLog
        const tenant = tenantOf(yield* freshMerchant())
        const e = yield* draft(tenant, "mandate.activated", T0)
        yield* outbox.append(e)
        const found = yield* log.find(tenant, e.id)
        expect(found?.id).toBe(e.id)
        expect(found?.text).toBe(JSON.stringify(Events.seal(e, 1).envelope))
        expect(yield* log.find({ ...tenant, environment: "live" }, e.id)).toBeUndefined()
        expect(yield* log.find(tenantOf(yield* freshMerchant()), e.id)).toBeUndefined()
        expect(yield* log.find(tenant, `evt_${(yield* uuid).replaceAll("-", "")}`)).toBeUndefined()
      })
    )

    it.effect("reads the refusals about one subject, newest first, the tenant's only", () =>
      Effect.gen(function* () {
        const outbox = yield* Events.Outbox
        const log = yield* EventLog.EventLog
        const tenant = tenantOf(yield* freshMerchant())
        const m = yield* newMandate(tenant)
        const refused = (at: DateTime.Utc, environment: Ids.Environment = tenant.environment) =>
          Events.make({
            id: `evt_${crypto.randomUUID().replaceAll("-", "")}`,
            type: "mandate.charge.failed",
            merchantId: tenant.merchantId,
            environment,
            now: at,
            object: Events.chargeFailedObject({
              mandate: m,
              amount: 900,
              reference: "r",
              description: "",
              code: "PER_CHARGE_CAP_EXCEEDED",
              message: "Amount exceeds the per charge cap",
              now: at
            })
          })
        const first = refused(T0)
        const later = refused(plus(T0, 2 * second))
        // Another event about the same mandate, and a refusal in the other environment: not refusals here.
        const activated = Events.make({
          id: `evt_${crypto.randomUUID().replaceAll("-", "")}`,
          type: "mandate.activated",
          merchantId: tenant.merchantId,
          environment: tenant.environment,
          now: plus(T0, second),
          object: Events.mandateObject(m)
        })
        for (const e of [first, activated, later, refused(T0, "live")]) yield* outbox.append(e)
        const ids = (list: ReadonlyArray<EventLog.Stored>) => list.map((e) => e.id)
        expect(ids(yield* log.failuresAbout(tenant, m.id, 10))).toEqual([later.id, first.id])
        expect(ids(yield* log.failuresAbout(tenant, m.id, 1))).toEqual([later.id])
        expect(yield* log.failuresAbout(tenantOf(yield* freshMerchant()), m.id, 10)).toEqual([])
        expect(yield* log.failuresAbout(tenant, yield* uuid, 10)).toEqual([])
      })
    )
  })
}
