/**
 * The outbox and notifications part of the store contract: events recorded oldest first and numbered per
 * subject, and notifications listed per customer. `StoreContract.suite` runs it on every adapter; every
 * test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Events, Ids, Notifications } from "@laari/core"
import { DateTime, Effect } from "effect"
import { Seed } from "../../Seed.js"
import {
  type It,
  T0,
  freshMerchant,
  freshPhone,
  newMandate,
  plain,
  plus,
  second,
  tenantOf,
  uuid
} from "../support/Helpers.js"

export const tests = (it: It): void => {
  describe("outbox and notifications", () => {
    it.effect("appended events are recorded, oldest first, numbered per subject", () =>
      Effect.gen(function* () {
        const seed = yield* Seed
        const outbox = yield* Events.Outbox
        const merchant = yield* freshMerchant()
        const m = yield* newMandate(tenantOf(merchant))
        const event = (type: Events.Type, at: DateTime.Utc) =>
          Effect.map(uuid, (id) =>
            Events.make({
              id: `evt_${id.replaceAll("-", "")}`,
              type,
              merchantId: merchant.id,
              environment: "test",
              now: at,
              object: Events.mandateObject(m)
            })
          )
        const first = yield* event("mandate.activated", T0)
        const second_ = yield* event("mandate.revoked", plus(T0, second))
        yield* outbox.append(first)
        yield* outbox.append(second_)
        const mine = (yield* seed.events).filter((e) => e.merchantId === merchant.id)
        expect(plain(mine)).toEqual(plain([Events.seal(first, 1), Events.seal(second_, 2)]))
        // Another subject's count starts on its own.
        const other = yield* newMandate(tenantOf(merchant))
        yield* outbox.append(
          Events.make({
            id: `evt_${(yield* uuid).replaceAll("-", "")}`,
            type: "mandate.activated",
            merchantId: merchant.id,
            environment: "test",
            now: T0,
            object: Events.mandateObject(other)
          })
        )
        const all = (yield* seed.events).filter((e) => e.merchantId === merchant.id)
        expect(all.map((e) => [e.subject, e.envelope.sequence])).toEqual([
          [m.id, 1],
          [m.id, 2],
          [other.id, 1]
        ])
      })
    )

    it.effect("notifications are listed per customer, newest first", () =>
      Effect.gen(function* () {
        const seed = yield* Seed
        const notifications = yield* Notifications.Notifications
        const customer = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
        const other = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
        const notification = (customerId: Ids.CustomerId, at: DateTime.Utc, i: number) =>
          Effect.map(
            uuid,
            (id): Notifications.Notification => ({
              id,
              customerId,
              environment: "test",
              kind: "mandate.charge",
              title: `Notice ${i}`,
              body: `Body ${i}`,
              data: { amount: 100 * i, mandate_id: "m", nested: { ok: true } },
              createdAt: at
            })
          )
        const made = [
          yield* notification(customer.id, plus(T0, 2 * second), 2),
          yield* notification(customer.id, T0, 0),
          yield* notification(customer.id, plus(T0, second), 1)
        ]
        for (const n of made) yield* notifications.send(n)
        yield* notifications.send(yield* notification(other.id, plus(T0, 3 * second), 3))
        expect(plain(yield* notifications.list(customer.id))).toEqual(plain([made[0], made[2], made[1]]))
        expect(yield* notifications.list((yield* uuid) as Ids.CustomerId)).toEqual([])
      })
    )
  })
}
