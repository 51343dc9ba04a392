/**
 * Core's `Deliveries` on `Testkit.layer`: a host with a `Sender` delivers webhooks with nothing more to
 * wire. An attempt is signed (Standard Webhooks, every signing secret), sent, recorded with what follows
 * and counted; the log is the endpoint's tenant's; a resend is never retried; and `deliver` never fails.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Counters,
  Deliveries,
  DeliveriesStore,
  Events,
  SecretSealer,
  WallClock,
  Webhook,
  WebhookEndpoints
} from "@laari/core"
import { DateTime, Effect } from "effect"
import { createHmac } from "node:crypto"
import { newMandate } from "../src/contract/support/Helpers.js"
import { Seed } from "../src/Seed.js"
import { sending } from "./support/Sending.js"
import * as Testkit from "../src/Testkit.js"

const caps: DeliveriesStore.Caps = { perEndpoint: 8, perFailingEndpoint: 1, perMerchant: 32 }

/** A merchant with an endpoint for every event, and an event of it in the outbox. */
const world = Effect.gen(function* () {
  const merchant = yield* Effect.flatMap(Seed, (seed) => seed.merchant({ name: "Hooked" }))
  const tenant = { merchantId: merchant.id, environment: "test" as const }
  const endpoints = yield* WebhookEndpoints.WebhookEndpoints
  const { endpoint, secret } = yield* endpoints.create(tenant, {
    url: "https://example.com/hook",
    enabledEvents: ["*"],
    description: null
  })
  const draft = Events.make({
    id: "evt_1",
    type: "mandate.activated",
    merchantId: merchant.id,
    environment: "test",
    now: yield* DateTime.now,
    object: Events.mandateObject(yield* newMandate(tenant))
  })
  yield* (yield* Events.Outbox).append(draft)
  return { tenant, endpoint, secret, draft }
})

const counted = Effect.map(Counters.read(Deliveries.Attempts), (series) => Object.fromEntries(series))

/** The signature `secret` makes of an attempt, as Standard Webhooks computes it. */
const signed = (secret: string, headers: Record<string, string>, body: string) =>
  `v1,${createHmac("sha256", Buffer.from(secret.slice(6), "base64"))
    .update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`)
    .digest("base64")}`

const run = <A, E>(effect: Effect.Effect<A, E, Testkit.Services>) => Effect.provide(effect, Testkit.layer())

describe("Deliveries", () => {
  it.effect("delivers a claimed attempt signed by every signing secret, and records and counts it", () =>
    run(
      Effect.gen(function* () {
        const deliveries = yield* Deliveries.Deliveries
        const { tenant, endpoint, secret, draft } = yield* world
        const rotated = yield* (yield* WebhookEndpoints.WebhookEndpoints).rotate(tenant, endpoint.id)
        const before = yield* counted
        const ok = sending(204)
        const [claimed, ...rest] = yield* deliveries.claim(yield* DateTime.now, 10, [], caps)
        expect(rest).toEqual([])
        yield* ok.provide(deliveries.deliver(claimed!))

        const [request] = ok.sent
        const body = JSON.stringify(Events.seal(draft, 1).envelope)
        expect(request?.url).toBe("https://example.com/hook")
        expect(request?.body).toBe(body)
        expect(request?.headers["webhook-id"]).toBe("evt_1")
        const wall = Math.floor(Date.now() / 1000)
        expect(Math.abs(Number(request?.headers["webhook-timestamp"]) - wall)).toBeLessThanOrEqual(1)
        expect(request?.headers["webhook-signature"]).toBe(
          `${signed(rotated.secret, request!.headers, body)} ${signed(secret, request!.headers, body)}`
        )
        const [attempt] = yield* deliveries.list(tenant, endpoint.id, { limit: 10, offset: 0 })
        expect(attempt).toMatchObject({
          status: "SUCCEEDED",
          responseStatus: 204,
          attempt: 1,
          nextRetryAt: null
        })
        expect((yield* counted).delivered).toBe(before.delivered! + 1)
      })
    )
  )

  it.effect("signs with the host's wall time (`WallClock`), not the service's clock", () =>
    Effect.provide(
      Effect.gen(function* () {
        const deliveries = yield* Deliveries.Deliveries
        yield* world
        const ok = sending(204)
        const [claimed] = yield* deliveries.claim(yield* DateTime.now, 10, [], caps)
        yield* ok.provide(deliveries.deliver(claimed!))
        // The service's clock stands at the testkit's start, in 2026; the wall clock in 2030.
        expect(ok.sent[0]?.headers["webhook-timestamp"]).toBe("1900000000")
      }),
      Testkit.layer({ wall: WallClock.fixed(1_900_000_000) })
    )
  )

  it.effect("a failure is retried by the schedule; a failed resend is given up", () =>
    run(
      Effect.gen(function* () {
        const deliveries = yield* Deliveries.Deliveries
        const { tenant, endpoint } = yield* world
        const before = yield* counted
        const down = sending(null)
        const now = yield* DateTime.now
        for (const c of yield* deliveries.claim(now, 10, [], caps)) yield* down.provide(deliveries.deliver(c))
        const log = yield* deliveries.list(tenant, endpoint.id, { limit: 10, offset: 0 })
        expect(log.map((a) => [a.attempt, a.status, a.error])).toEqual([
          [2, "PENDING", null],
          [1, "FAILED", "connection refused"]
        ])
        expect(log[0]?.dueAt && DateTime.toEpochMillis(log[0].dueAt)).toBe(
          DateTime.toEpochMillis(Webhook.nextRetryAt(1, now, false)!)
        )

        const resent = yield* deliveries.resend(tenant, endpoint.id, "evt_1")
        expect(resent).toMatchObject({ attempt: 3, resend: true, status: "PENDING" })
        const [claimed] = yield* deliveries.claim(now, 10, [], caps)
        expect(claimed?.attempt.id).toBe(resent.id)
        yield* down.provide(deliveries.deliver(claimed!))
        expect(
          (yield* deliveries.list(tenant, endpoint.id, { limit: 1, offset: 0, status: "FAILED" }))[0]
        ).toMatchObject({
          id: resent.id,
          nextRetryAt: null
        })
        const after = yield* counted
        expect([after.failed! - before.failed!, after.gave_up! - before.gave_up!]).toEqual([1, 1])
      })
    )
  )

  it.effect("the log and resends are the endpoint's tenant's; an unknown event is not found", () =>
    run(
      Effect.gen(function* () {
        const deliveries = yield* Deliveries.Deliveries
        const { tenant, endpoint } = yield* world
        const other = { ...tenant, environment: "live" as const }
        const page = { limit: 10, offset: 0 }
        expect((yield* Effect.flip(deliveries.list(other, endpoint.id, page)))._tag).toBe(
          "WebhookEndpointNotFound"
        )
        expect((yield* Effect.flip(deliveries.resend(other, endpoint.id, "evt_1")))._tag).toBe(
          "WebhookEndpointNotFound"
        )
        expect((yield* Effect.flip(deliveries.resend(tenant, endpoint.id, "evt_2")))._tag).toBe(
          "EventNotFound"
        )
        // The operator reads a merchant's endpoints in both environments.
        expect(yield* deliveries.list({ merchantId: tenant.merchantId }, endpoint.id, page)).toHaveLength(1)
      })
    )
  )

  it.effect("never fails: an attempt it cannot make or record stays leased, to be made again", () =>
    run(
      Effect.gen(function* () {
        const deliveries = yield* Deliveries.Deliveries
        const { tenant, endpoint } = yield* world
        const ok = sending(200)
        const [claimed] = yield* deliveries.claim(yield* DateTime.now, 10, [], caps)
        const broken: SecretSealer.SecretSealerService = {
          ...SecretSealer.plainSealer,
          open: () => Effect.die("no key")
        }
        yield* ok
          .provide(deliveries.deliver(claimed!))
          .pipe(Effect.provideService(SecretSealer.SecretSealer, broken))
        expect(ok.sent).toEqual([])
        const [attempt] = yield* deliveries.list(tenant, endpoint.id, { limit: 10, offset: 0 })
        expect(attempt?.status).toBe("PENDING")
        expect(yield* deliveries.claim(yield* DateTime.now, 10, [], caps)).toEqual([])
        const leased = DateTime.addDuration(yield* DateTime.now, DeliveriesStore.Lease)
        expect(DateTime.toEpochMillis((yield* deliveries.nextDueAt)!)).toBe(DateTime.toEpochMillis(leased))
      })
    )
  )
})
