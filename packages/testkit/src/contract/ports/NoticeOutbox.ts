/**
 * The notice outbox part of the store contract (`NoticeOutbox`): a queued notice is due at once and
 * leased to one worker at a time with the customer's phone in its document; a code is never claimed once
 * expired (`expire` records it); completing records the verdict, and an attempt whose lease another
 * worker took changes nothing. Claims and `nextDueAt` are global, so every test runs in 1950 (`Era`), in
 * a transaction that is rolled back.
 */
import { describe, expect } from "@effect/vitest"
import { DeliveriesStore, Notice, NoticeOutbox, type Notifications, type Webhook } from "@laari/core"
import { DateTime, Effect } from "effect"
import { Seed } from "../../Seed.js"
import {
  Era,
  freshPhone,
  type It,
  minute,
  plain,
  plus,
  rolledBack,
  second,
  uuid
} from "../support/Helpers.js"

/** A notice to a new customer, made at `at`, expiring `expiresAt` when given. */
const queued = (at: DateTime.Utc, kind: Notifications.Kind = "payment", expiresAt?: DateTime.Utc) =>
  Effect.gen(function* () {
    const customer = yield* (yield* Seed).customer({ environment: "test", phone: yield* freshPhone })
    const notice: Notifications.Notification = {
      id: `ntf_${(yield* uuid).replaceAll("-", "")}`,
      customerId: customer.id,
      environment: "test",
      kind,
      title: "Paid",
      body: "You paid 10.00",
      data: kind === "one_time_code" ? { code: "123456" } : { amount: 1000 },
      createdAt: at,
      expiresAt
    }
    yield* (yield* NoticeOutbox.NoticeOutbox).queue(notice)
    return { notice, phone: customer.phone }
  })

const response = (status: number | null): Webhook.Response => ({
  status,
  body: null,
  error: status === null ? "connection refused" : status < 300 ? null : `HTTP ${status}`,
  durationMs: 3
})

/** Records `claimed`'s attempt as answered `status` at `at`, as `Notices.deliver` does. */
const complete = (claimed: NoticeOutbox.Claimed, status: number | null, at: DateTime.Utc) =>
  Effect.gen(function* () {
    const r = response(status)
    const verdict = Notice.verdict(claimed, r, at)
    yield* (yield* NoticeOutbox.NoticeOutbox).complete(claimed, { response: r, verdict, at })
    return verdict
  })

export const tests = (it: It): void => {
  describe("Notice outbox", () => {
    it.effect("a queued notice is due at once, leased to one worker, its document with the phone", () =>
      rolledBack(
        Effect.gen(function* () {
          const outbox = yield* NoticeOutbox.NoticeOutbox
          const { notice, phone } = yield* queued(Era)
          expect(plain(yield* outbox.nextDueAt)).toEqual(plain(Era))
          const [claimed, ...more] = yield* outbox.claim(Era, 10)
          expect(more).toEqual([])
          expect(plain(claimed)).toEqual(
            plain({
              id: notice.id,
              kind: "payment",
              attempt: 1,
              body: Notice.withPhone(Notice.stored(notice), phone),
              expiresAt: null,
              giveUpAt: Notice.giveUpAt(Era)
            })
          )
          expect(JSON.parse(claimed!.body).customer.phone).toBe(phone)
          // Leased: not claimed again until the lease runs out, and due then.
          expect(yield* outbox.claim(plus(Era, second), 10)).toEqual([])
          const leaseEnd = DateTime.addDuration(Era, DeliveriesStore.Lease)
          expect(plain(yield* outbox.nextDueAt)).toEqual(plain(leaseEnd))
          const again = yield* outbox.claim(leaseEnd, 10)
          expect(again.map((c) => [c.id, c.attempt])).toEqual([[notice.id, 2]])
        })
      )
    )

    it.effect("claims earliest due first, up to the limit, and only what is due", () =>
      rolledBack(
        Effect.gen(function* () {
          const outbox = yield* NoticeOutbox.NoticeOutbox
          const late = yield* queued(plus(Era, 2 * second))
          const early = yield* queued(Era)
          const future = yield* queued(plus(Era, minute))
          const claimed = yield* outbox.claim(plus(Era, 3 * second), 1)
          expect(claimed.map((c) => c.id)).toEqual([early.notice.id])
          const rest = yield* outbox.claim(plus(Era, 3 * second), 10)
          expect(rest.map((c) => c.id)).toEqual([late.notice.id])
          // Leased, they are due again when their lease runs out; delivered, never.
          const leaseEnd = DateTime.addDuration(plus(Era, 3 * second), DeliveriesStore.Lease)
          expect(plain(yield* outbox.nextDueAt)).toEqual(plain(leaseEnd))
          for (const c of [...claimed, ...rest]) yield* complete(c, 204, plus(Era, 4 * second))
          expect(plain(yield* outbox.nextDueAt)).toEqual(plain(plus(Era, minute)))
          expect((yield* outbox.claim(plus(Era, minute), 10)).map((c) => c.id)).toEqual([future.notice.id])
        })
      )
    )

    it.effect("a failed attempt is due again at the verdict's time; a delivered one is over", () =>
      rolledBack(
        Effect.gen(function* () {
          const outbox = yield* NoticeOutbox.NoticeOutbox
          const { notice } = yield* queued(Era)
          const [first] = yield* outbox.claim(Era, 10)
          const verdict = yield* complete(first!, 503, Era)
          expect(verdict.result).toBe("failed")
          expect(plain(yield* outbox.nextDueAt)).toEqual(plain(verdict.next))
          expect(yield* outbox.claim(plus(Era, 4 * second), 10)).toEqual([])
          const [second_] = yield* outbox.claim(verdict.next!, 10)
          expect([second_!.id, second_!.attempt]).toEqual([notice.id, 2])
          expect((yield* complete(second_!, 200, verdict.next!)).result).toBe("delivered")
          expect(yield* outbox.nextDueAt).toBeUndefined()
          expect(yield* outbox.claim(plus(Era, minute), 10)).toEqual([])
        })
      )
    )

    it.effect("an attempt whose lease another worker took changes nothing", () =>
      rolledBack(
        Effect.gen(function* () {
          const outbox = yield* NoticeOutbox.NoticeOutbox
          yield* queued(Era)
          const [stale] = yield* outbox.claim(Era, 10)
          const leaseEnd = DateTime.addDuration(Era, DeliveriesStore.Lease)
          const [current] = yield* outbox.claim(leaseEnd, 10)
          yield* complete(stale!, 200, leaseEnd)
          // Still pending, held by the second worker until its lease runs out.
          const later = DateTime.addDuration(leaseEnd, DeliveriesStore.Lease)
          expect(plain(yield* outbox.nextDueAt)).toEqual(plain(later))
          expect((yield* complete(current!, 200, leaseEnd)).result).toBe("delivered")
          expect(yield* outbox.nextDueAt).toBeUndefined()
        })
      )
    )

    it.effect("a code is never claimed once expired: expire records it, and a late retry drops it", () =>
      rolledBack(
        Effect.gen(function* () {
          const outbox = yield* NoticeOutbox.NoticeOutbox
          const expiresAt = plus(Era, 5 * minute)
          yield* queued(Era, "one_time_code", expiresAt)
          expect(yield* outbox.expire(plus(Era, minute))).toBe(0)
          expect(yield* outbox.expire(expiresAt)).toBe(1)
          expect(yield* outbox.claim(expiresAt, 10)).toEqual([])
          expect(yield* outbox.nextDueAt).toBeUndefined()

          // A code failing late: its next try would come after it expired, so it is dropped.
          const { notice } = yield* queued(plus(Era, 4 * minute), "one_time_code", expiresAt)
          const [claimed] = yield* outbox.claim(plus(Era, 4 * minute + 58 * second), 10)
          expect(claimed!.id).toBe(notice.id)
          expect((yield* complete(claimed!, null, plus(Era, 4 * minute + 58 * second))).result).toBe(
            "expired"
          )
          expect(yield* outbox.nextDueAt).toBeUndefined()
          expect(yield* outbox.claim(plus(Era, 10 * minute), 10)).toEqual([])
        })
      )
    )
  })
}
