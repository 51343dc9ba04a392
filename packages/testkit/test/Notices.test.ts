/**
 * Core's `Notices` on `Testkit.layer`, the layers `Engine.layer` wires it with: a host with a `Sender`
 * and a channel delivers customer notices with nothing more to wire. A due notice is signed (Standard
 * Webhooks, checked by its reference library) and sent; a failed send is retried per `Notice`'s
 * schedule; a one-time code is never sent once it expired.
 */
import { describe, expect, it } from "@effect/vitest"
import { Counters, Notice, NoticeOutbox, Notices, type Notifications, WallClock } from "@laari/core"
import { DateTime, Duration, Effect, HashMap, Option } from "effect"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { ControllableClock } from "../src/ControllableClock.js"
import { MemoryDb } from "../src/MemoryDb.js"
import { Seed } from "../src/Seed.js"
import { type Sending, sending } from "./support/Sending.js"
import * as Testkit from "../src/Testkit.js"

const channel: Notices.Channel = {
  url: "https://notify.example/notices",
  secret: `whsec_${Buffer.from("the notification service's key").toString("base64")}`
}

/** A customer's notice of `kind`, queued in the outbox now; a one-time code expires after `expiresIn`. */
const queued = (kind: Notifications.Kind, expiresIn?: Duration.DurationInput) =>
  Effect.gen(function* () {
    const customer = yield* Effect.flatMap(Seed, (seed) =>
      seed.customer({ environment: "test", phone: "+9607771234" })
    )
    const now = yield* DateTime.now
    const notice: Notifications.Notification = {
      id: crypto.randomUUID(),
      customerId: customer.id,
      environment: "test",
      kind,
      title: "Your code",
      body: "Use 123456",
      data: { code: "123456" },
      createdAt: now,
      expiresAt: expiresIn === undefined ? undefined : DateTime.addDuration(now, Duration.decode(expiresIn))
    }
    yield* (yield* NoticeOutbox.NoticeOutbox).queue(notice)
    return notice
  })

/** The outbox row of notice `id`, as the memory store keeps it. */
const row = (id: string) =>
  Effect.map(
    Effect.flatMap(MemoryDb, (db) => db.get),
    (t) => Option.getOrThrow(HashMap.get(t.noticeOutbox, id)).value
  )

const counted = Effect.map(Counters.read(Notices.Counted), (series) => Object.fromEntries(series))

/** Claims what is due now and delivers each through `sender`; how many were claimed. */
const sendDue = (sender: Sending) =>
  Effect.gen(function* () {
    const notices = yield* Notices.Notices
    const claimed = yield* notices.claim(yield* DateTime.now, 10)
    for (const c of claimed) yield* sender.provide(notices.deliver(channel, c))
    return claimed.length
  })

const run = <A, E>(effect: Effect.Effect<A, E, Testkit.Services>) => Effect.provide(effect, Testkit.layer())

describe("Notices", () => {
  it.effect("a due notice is signed under the channel's secret, sent once, and recorded delivered", () =>
    run(
      Effect.gen(function* () {
        const notice = yield* queued("payment")
        const before = yield* counted
        const ok = sending(204)
        expect(yield* sendDue(ok)).toBe(1)

        const [request] = ok.sent
        expect(request?.url).toBe(channel.url)
        expect(request?.body).toBe(Notice.withPhone(Notice.stored(notice), "+9607771234"))
        expect(request?.headers["webhook-id"]).toBe(notice.id)
        const verified = new StandardWebhook(channel.secret).verify(request!.body, request!.headers)
        expect(verified).toMatchObject({ id: notice.id, type: "payment", customer: { phone: "+9607771234" } })
        // Under another secret the signature does not hold.
        expect(() =>
          new StandardWebhook(
            `whsec_${Buffer.from("another key, not the channel's").toString("base64")}`
          ).verify(request!.body, request!.headers)
        ).toThrow()

        expect(yield* row(notice.id)).toMatchObject({ status: "DELIVERED", attempts: 1, lastStatus: 204 })
        expect(yield* sendDue(ok)).toBe(0)
        expect((yield* counted).delivered).toBe(before.delivered! + 1)
      })
    )
  )

  it.effect("signs with the host's wall time (`WallClock`), not the service's clock", () =>
    Effect.provide(
      Effect.gen(function* () {
        yield* queued("payment")
        const ok = sending(204)
        expect(yield* sendDue(ok)).toBe(1)
        // The service's clock stands at the testkit's start, in 2026; the wall clock in 2030.
        expect(ok.sent[0]?.headers["webhook-timestamp"]).toBe("1900000000")
      }),
      Testkit.layer({ wall: WallClock.fixed(1_900_000_000) })
    )
  )

  it.effect("a failed send is retried after each of Notice's delays, then delivered", () =>
    run(
      Effect.gen(function* () {
        const clock = yield* ControllableClock
        const notices = yield* Notices.Notices
        const notice = yield* queued("refund")
        const before = yield* counted
        const down = sending(null)
        const start = yield* DateTime.now

        expect(yield* sendDue(down)).toBe(1)
        const first = DateTime.addDuration(start, Notice.delayAfter(1))
        expect(yield* notices.nextDueAt).toEqual(first)
        // Not due again before its delay.
        yield* clock.skip(Duration.subtract(Notice.delayAfter(1), Duration.millis(1)))
        expect(yield* sendDue(down)).toBe(0)

        yield* clock.skip(Duration.millis(1))
        expect(yield* sendDue(down)).toBe(1)
        expect(yield* notices.nextDueAt).toEqual(DateTime.addDuration(first, Notice.delayAfter(2)))
        expect(yield* row(notice.id)).toMatchObject({
          status: "PENDING",
          attempts: 2,
          lastError: "connection refused"
        })

        yield* clock.skip(Notice.delayAfter(2))
        const ok = sending(200)
        expect(yield* sendDue(ok)).toBe(1)
        expect(down.sent.map((r) => r.headers["webhook-id"])).toEqual([notice.id, notice.id])
        expect(ok.sent).toHaveLength(1)
        expect(yield* row(notice.id)).toMatchObject({ status: "DELIVERED", attempts: 3 })
        const after = yield* counted
        expect([after.failed! - before.failed!, after.delivered! - before.delivered!]).toEqual([2, 1])
      })
    )
  )

  it.effect("a one-time code that expired before it was sent is never sent, and is counted expired", () =>
    run(
      Effect.gen(function* () {
        const clock = yield* ControllableClock
        const notice = yield* queued("one_time_code", "5 minutes")
        const before = yield* counted
        yield* clock.skip("5 minutes")
        const ok = sending(204)
        expect(yield* sendDue(ok)).toBe(0)
        expect(ok.sent).toEqual([])
        expect(yield* row(notice.id)).toMatchObject({ status: "EXPIRED", attempts: 0, payload: null })
        expect((yield* counted).expired).toBe(before.expired! + 1)
      })
    )
  )

  it.effect("a one-time code whose next try would come after its expiry is dropped, not sent late", () =>
    run(
      Effect.gen(function* () {
        const clock = yield* ControllableClock
        // Retried after 5 s; the next retry, 15 s later, would come after the code expired.
        const notice = yield* queued("one_time_code", "10 seconds")
        const down = sending(503)
        expect(yield* sendDue(down)).toBe(1)
        yield* clock.skip(Notice.delayAfter(1))
        expect(yield* sendDue(down)).toBe(1)
        expect(yield* row(notice.id)).toMatchObject({ status: "EXPIRED", payload: null })
        yield* clock.skip("1 hour")
        const ok = sending(204)
        expect(yield* sendDue(ok)).toBe(0)
        expect(down.sent).toHaveLength(2)
        expect(ok.sent).toEqual([])
        expect(yield* (yield* Notices.Notices).nextDueAt).toBeUndefined()
      })
    )
  )
})
