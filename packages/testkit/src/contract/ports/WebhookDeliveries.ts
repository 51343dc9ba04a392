/**
 * The webhook delivery log part of the store contract (`DeliveriesStore`): the outbox queues an event's
 * first attempt to each enabled endpoint of its tenant subscribed to it; the log reads newest first; a
 * resend numbers after the event's last attempt; a claim leases what is due, earliest first, within the
 * caps; completing records the outcome, the retry and the endpoint's streak; deleting an endpoint fails
 * what it still had to send. Claims and `nextDueAt` are global, so every test runs in 1950 (`Era`), in a
 * transaction that is rolled back.
 */
import { describe, expect } from "@effect/vitest"
import { DeliveriesStore, EventLog, Events, type Ids, Store, Webhook } from "@laari/core"
import { DateTime, Effect } from "effect"
import {
  Era,
  type It,
  freshMerchant,
  newMandate,
  plain,
  plus,
  rolledBack,
  second,
  tenantOf,
  uuid
} from "../support/Helpers.js"

const caps: DeliveriesStore.Caps = { perEndpoint: 2, perFailingEndpoint: 1, perMerchant: 3 }
const page = { limit: 20, offset: 0 }

/** An endpoint of `tenant` listening for `events`, its secret as stored: `sealed-<n>`. */
const endpointOf = (tenant: Ids.Tenant, events: ReadonlyArray<string> = ["*"]) =>
  Effect.gen(function* () {
    const store = yield* Store.WebhookEndpointsStore
    const id = yield* uuid
    const e = yield* store.create(
      tenant,
      {
        id,
        url: `https://example.com/${id}`,
        enabledEvents: events,
        description: null,
        secret: `sealed-${id}`
      },
      Era,
      Webhook.MaxEndpoints
    )
    return e!
  })

/** An event of `tenant` appended to the outbox at `at`. */
const appended = (tenant: Ids.Tenant, type: Events.Type, at: DateTime.Utc) =>
  Effect.gen(function* () {
    const draft = Events.make({
      id: `evt_${(yield* uuid).replaceAll("-", "")}`,
      type,
      merchantId: tenant.merchantId,
      environment: tenant.environment,
      now: at,
      object: Events.mandateObject(yield* newMandate(tenant))
    })
    yield* (yield* Events.Outbox).append(draft)
    return draft
  })

const response = (status: number | null, error: string | null = null): Webhook.Response => ({
  status,
  body: status === null ? null : `answer ${status}`,
  error,
  durationMs: 12
})

const byDue = (a: DeliveriesStore.Claimed, b: DeliveriesStore.Claimed) =>
  DateTime.toEpochMillis(a.attempt.dueAt) - DateTime.toEpochMillis(b.attempt.dueAt)

/** Records `claimed`'s attempt as answered `r` at `at`, as `Deliveries.deliver` does. */
const complete = (claimed: DeliveriesStore.Claimed, r: Webhook.Response, at: DateTime.Utc) =>
  Effect.gen(function* () {
    const nextId = yield* uuid
    const verdict = Webhook.verdict(claimed.attempt, r, at)
    yield* (yield* DeliveriesStore.DeliveriesStore).complete(claimed, { response: r, verdict, at, nextId })
    return { nextId, verdict }
  })

export const tests = (it: It): void => {
  describe("Webhook deliveries", () => {
    it.effect(
      "the outbox queues a first attempt to each enabled, subscribed endpoint; the log reads newest first",
      () =>
        rolledBack(
          Effect.gen(function* () {
            const store = yield* DeliveriesStore.DeliveriesStore
            const endpoints = yield* Store.WebhookEndpointsStore
            const merchant = yield* freshMerchant()
            const tenant = tenantOf(merchant)
            const all = yield* endpointOf(tenant)
            const revoked = yield* endpointOf(tenant, ["mandate.revoked"])
            const disabled = yield* endpointOf(tenant)
            yield* endpoints.update(tenant, disabled.id, { status: "DISABLED" })
            const live = yield* endpointOf(tenantOf(merchant, "live"))
            const first = yield* appended(tenant, "mandate.activated", Era)
            const next = yield* appended(tenant, "mandate.revoked", plus(Era, second))

            const log = yield* store.list(all.id, page)
            expect(log.map((a) => a.eventId)).toEqual([next.id, first.id])
            expect(plain(log[1])).toEqual(
              plain({
                id: log[1]!.id,
                endpointId: all.id,
                eventId: first.id,
                eventType: "mandate.activated",
                attempt: 1,
                resend: false,
                status: "PENDING",
                responseStatus: null,
                responseBody: null,
                error: null,
                durationMs: null,
                attemptedAt: null,
                nextRetryAt: null,
                dueAt: Era,
                createdAt: Era
              })
            )
            expect((yield* store.list(revoked.id, page)).map((a) => a.eventId)).toEqual([next.id])
            expect(yield* store.list(disabled.id, page)).toEqual([])
            expect(yield* store.list(live.id, page)).toEqual([])
            // Filtered and paged.
            expect((yield* store.list(all.id, { ...page, eventId: first.id })).map((a) => a.eventId)).toEqual(
              [first.id]
            )
            expect(yield* store.list(all.id, { ...page, status: "SUCCEEDED" })).toEqual([])
            expect((yield* store.list(all.id, { limit: 1, offset: 1 })).map((a) => a.eventId)).toEqual([
              first.id
            ])

            // A resend: numbered after the event's last attempt there, due now, never retried.
            const now = plus(Era, 60 * second)
            const again = yield* store.resend(all, first.id, yield* uuid, now)
            expect(again).toMatchObject({ eventId: first.id, attempt: 2, resend: true, status: "PENDING" })
            expect(plain(again?.dueAt)).toEqual(plain(now))
            expect((yield* store.list(all.id, page))[0]?.id).toBe(again?.id)
            expect((yield* store.resend(revoked, first.id, yield* uuid, now))?.attempt).toBe(1)
            // Only the endpoint's own merchant's events, in its environment.
            expect(yield* store.resend(live, first.id, yield* uuid, now)).toBeUndefined()
            const other = yield* endpointOf(tenantOf(yield* freshMerchant()))
            expect(yield* store.resend(other, first.id, yield* uuid, now)).toBeUndefined()
            expect(yield* store.resend(all, "evt_missing", yield* uuid, now)).toBeUndefined()
          })
        )
    )

    it.effect(
      "a claim leases what is due, earliest first, within the caps; completing records what follows",
      () =>
        rolledBack(
          Effect.gen(function* () {
            const store = yield* DeliveriesStore.DeliveriesStore
            const endpoints = yield* Store.WebhookEndpointsStore
            const log = yield* EventLog.EventLog
            const tenant = tenantOf(yield* freshMerchant())
            const a = yield* endpointOf(tenant)
            const events = [
              yield* appended(tenant, "mandate.activated", Era),
              yield* appended(tenant, "mandate.revoked", plus(Era, second)),
              yield* appended(tenant, "mandate.activated", plus(Era, 2 * second))
            ]
            const at = plus(Era, second)
            expect(yield* store.claim(at, 10, [a.id], caps)).toEqual([])
            // The two due, in no particular order.
            const claimed = [...(yield* store.claim(at, 10, [], caps))].sort(byDue)
            expect(claimed.map((c) => c.attempt.eventId)).toEqual([events[0]!.id, events[1]!.id])
            expect(claimed[0]).toMatchObject({
              merchantId: tenant.merchantId,
              environment: "test",
              url: a.url,
              secrets: { secret: `sealed-${a.id}`, previousSecret: null, previousSecretExpiresAt: null },
              body: (yield* log.find(tenant, events[0]!.id))?.text
            })
            // Leased; and the endpoint has its two in flight.
            expect(yield* store.claim(plus(Era, 2 * second), 10, [], caps)).toEqual([])
            expect(plain(yield* store.nextDueAt)).toEqual(plain(plus(Era, 2 * second)))

            // A success: recorded, nothing follows.
            yield* complete(claimed[0]!, response(200), at)
            expect((yield* store.list(a.id, { ...page, eventId: events[0]!.id })).map(plain)).toEqual([
              plain({
                ...claimed[0]!.attempt,
                status: "SUCCEEDED",
                responseStatus: 200,
                responseBody: "answer 200",
                error: null,
                durationMs: 12,
                attemptedAt: at,
                nextRetryAt: null
              })
            ])
            // A failure: the next attempt, due by the schedule, and the endpoint's failing streak.
            const { nextId, verdict } = yield* complete(claimed[1]!, response(500, "HTTP 500"), at)
            const retry = plus(at, 5 * second)
            expect(plain(verdict.next)).toEqual(plain(retry))
            const tries = yield* store.list(a.id, { ...page, eventId: events[1]!.id })
            expect(tries.map((t) => [t.id, t.attempt, t.status, t.error])).toEqual([
              [nextId, 2, "PENDING", null],
              [claimed[1]!.attempt.id, 1, "FAILED", "HTTP 500"]
            ])
            expect(plain([tries[0]!.dueAt, tries[0]!.createdAt, tries[1]!.nextRetryAt])).toEqual(
              plain([retry, at, retry])
            )
            expect(plain((yield* endpoints.find(tenant, a.id))?.failingSince)).toEqual(plain(at))
            // Recorded once: a late worker's outcome is left out.
            yield* complete(claimed[1]!, response(200), plus(at, second))
            expect(
              (yield* store.list(a.id, { ...page, eventId: events[1]!.id })).map((t) => t.status)
            ).toEqual(["PENDING", "FAILED"])

            // A failing endpoint holds one slot: of the third event's attempt and the retry, the earlier.
            const later = plus(Era, 60 * second)
            const one = yield* store.claim(later, 10, [], caps)
            expect(one.map((c) => c.attempt.eventId)).toEqual([events[2]!.id])
            expect(yield* store.claim(later, 10, [], caps)).toEqual([])
            // A success ends the streak.
            yield* complete(one[0]!, response(204), later)
            expect((yield* endpoints.find(tenant, a.id))?.failingSince).toBeNull()
            expect((yield* store.claim(later, 10, [], caps)).map((c) => c.attempt.id)).toEqual([nextId])
            expect(plain(yield* store.nextDueAt)).toEqual(plain(plus(later, 20 * second)))
          })
        )
    )

    it.effect("a merchant's environment holds at most its cap in flight; other merchants go on", () =>
      rolledBack(
        Effect.gen(function* () {
          const store = yield* DeliveriesStore.DeliveriesStore
          const tenant = tenantOf(yield* freshMerchant())
          const other = tenantOf(yield* freshMerchant())
          const mine = [yield* endpointOf(tenant), yield* endpointOf(tenant)]
          const theirs = yield* endpointOf(other)
          for (let i = 0; i < 3; i++) yield* appended(tenant, "mandate.activated", plus(Era, i * second))
          yield* appended(other, "mandate.activated", plus(Era, 3 * second))
          const claimed = yield* store.claim(plus(Era, 10 * second), 10, [], caps)
          const by = (id: string) => claimed.filter((c) => c.attempt.endpointId === id).length
          // Six attempts of the merchant's are due: two per endpoint fit, three for the merchant.
          expect(by(mine[0]!.id) + by(mine[1]!.id)).toBe(caps.perMerchant)
          expect(Math.max(by(mine[0]!.id), by(mine[1]!.id))).toBe(caps.perEndpoint)
          expect(by(theirs.id)).toBe(1)
          expect(claimed.length).toBe(4)
          // The merchant's earliest due: both endpoints' first event, and one of the second's.
          const dues = claimed
            .filter((c) => c.merchantId === tenant.merchantId)
            .map((c) => DateTime.toEpochMillis(c.attempt.dueAt) - DateTime.toEpochMillis(Era))
            .sort((x, y) => x - y)
          expect(dues).toEqual([0, 0, 1_000])
          expect(yield* store.claim(plus(Era, 10 * second), 10, [], caps)).toEqual([])
        })
      )
    )

    it.effect("a resend's failure changes nothing more; a streak of DisableAfter disables the endpoint", () =>
      rolledBack(
        Effect.gen(function* () {
          const store = yield* DeliveriesStore.DeliveriesStore
          const endpoints = yield* Store.WebhookEndpointsStore
          const tenant = tenantOf(yield* freshMerchant())
          const a = yield* endpointOf(tenant)
          const event = yield* appended(tenant, "mandate.activated", Era)
          for (const c of yield* store.claim(Era, 10, [], caps))
            yield* complete(c, response(null, "connection refused"), Era)
          yield* store.resend(a, event.id, yield* uuid, Era)
          const resent = (yield* store.claim(plus(Era, second), 10, [], caps)).filter((c) => c.attempt.resend)
          expect(resent.length).toBe(1)
          const { verdict } = yield* complete(
            resent[0]!,
            response(500, "HTTP 500"),
            plus(Era, 4 * 86_400 * second)
          )
          expect(verdict).toMatchObject({ next: null, result: "gave_up" })
          expect((yield* endpoints.find(tenant, a.id))?.status).toBe("ENABLED")

          // The retry, three days into the streak: the endpoint is disabled, and nothing of it is due.
          const end = DateTime.addDuration(Era, Webhook.DisableAfter)
          const [retry] = yield* store.claim(end, 10, [], caps)
          expect(retry?.attempt.attempt).toBe(2)
          yield* complete(retry!, response(503, "HTTP 503"), end)
          const disabled = yield* endpoints.find(tenant, a.id)
          expect(disabled?.status).toBe("DISABLED")
          expect(disabled?.statusReason).toMatch(
            /^Disabled by laari: every delivery failed for 3 days .*HTTP 503$/
          )
          expect(yield* store.claim(plus(end, 86_400 * second), 10, [], caps)).toEqual([])
          expect(yield* store.nextDueAt).toBeUndefined()
        })
      )
    )

    it.effect("deleting an endpoint fails what it still had to send", () =>
      rolledBack(
        Effect.gen(function* () {
          const store = yield* DeliveriesStore.DeliveriesStore
          const endpoints = yield* Store.WebhookEndpointsStore
          const tenant = tenantOf(yield* freshMerchant())
          const a = yield* endpointOf(tenant)
          yield* appended(tenant, "mandate.activated", Era)
          const now = plus(Era, second)
          yield* endpoints.remove(tenant, a.id, now)
          const [failed] = yield* store.list(a.id, page)
          expect(failed).toMatchObject({ status: "FAILED", error: "the endpoint was deleted", durationMs: 0 })
          expect(plain(failed?.attemptedAt)).toEqual(plain(now))
          expect(yield* store.claim(now, 10, [], caps)).toEqual([])
        })
      )
    )
  })
}
