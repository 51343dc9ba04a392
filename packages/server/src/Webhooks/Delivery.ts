/**
 * The delivery worker. Due attempts are leased from the log (`WebhookStore.claim`), signed at the moment
 * they are sent, sent, and recorded with what follows from them (the next attempt, the endpoint's
 * health). In real time a worker is woken by the outbox's `NOTIFY` (and a one-second poll as a
 * fallback) and keeps up to `concurrency` attempts in flight, at most `perEndpoint` per endpoint, so a
 * slow or dead endpoint holds a few slots and never the whole worker. On a manual clock, advancing the
 * clock runs the same attempts through the `Job`.
 */
import { Crypto, Counters, Work, Webhook } from "@laari/core"
import { DateTime, Effect, FiberSet, Layer, Queue, Schedule, Stream } from "effect"
import { ServerConfigTag } from "../Config.js"
import { DeliveryChannel } from "../Sql/Events.js"
import * as Wakeup from "../Sql/Wakeup.js"
import * as Address from "./Address.js"
import * as Sender from "./Sender.js"
import * as Signing from "./Signing.js"
import { type Claimed, WebhookStore } from "./Sql.js"

export const JobName = "webhook-deliveries"

/**
 * Attempts once recorded: `delivered`; `failed`, another attempt follows; `gave_up`, none follows (the
 * last automatic attempt, or a resend).
 */
export const Deliveries = Counters.counter({
  name: "laari_webhook_deliveries_total",
  description: "Webhook delivery attempts by outcome: delivered, failed (retried), gave_up",
  label: "outcome",
  values: ["delivered", "failed", "gave_up"]
})

export interface Limits {
  /** Attempts in flight per process. */
  readonly concurrency: number
  /** Attempts in flight per endpoint and process. */
  readonly perEndpoint: number
}

export const defaultLimits: Limits = { concurrency: 64, perEndpoint: 8 }

export interface DeliveryService {
  /** The job the manual clock runs: every due attempt, each waited for. */
  readonly job: Work.Job
  /** Claims what fits in the free slots and starts it without waiting (the real-time worker). */
  readonly fill: Effect.Effect<number>
  /** Resolves once something finished or was asked for. */
  readonly wakeups: Queue.Queue<void>
}

const make = (limits: Limits) =>
  Effect.gen(function* () {
    const store = yield* WebhookStore
    const crypto = yield* Crypto.Crypto
    const config = yield* ServerConfigTag
    const policy: Address.Policy = { allowPrivate: config.webhookAllowPrivate }
    const fibers = yield* FiberSet.make()
    const wakeups = yield* Queue.sliding<void>(1)
    const inFlight = new Map<string, number>()
    let total = 0

    /** Signs and sends one leased attempt and records its outcome. */
    const deliver = (claimed: Claimed) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const { attempt } = claimed
        // Receivers check webhook-timestamp against their own clock (Standard Webhooks: 5 minutes), so it
        // is the wall time even when the service's clock is manual; the event's `created` keeps that clock.
        const timestamp = Math.floor(Date.now() / 1000)
        const response = yield* Sender.send({
          url: claimed.url,
          headers: Signing.headers(
            Webhook.signingSecrets(claimed.secrets, now),
            attempt.eventId,
            timestamp,
            claimed.body
          ),
          body: claimed.body,
          publicOnly: Address.mustBePublic(policy, claimed.environment)
        })
        const succeeded = Sender.succeeded(response)
        yield* store.complete(
          claimed,
          {
            response: { ...response, succeeded, summary: response.error ?? `HTTP ${response.status}` },
            at: now
          },
          yield* crypto.uuid
        )
        yield* Counters.count(
          Deliveries,
          succeeded
            ? "delivered"
            : Webhook.nextRetryAt(attempt.attempt, now, attempt.resend) === null
              ? "gave_up"
              : "failed"
        )
      }).pipe(
        // A failure to record leaves the lease to run out: the attempt is made again.
        Effect.catchAllCause((cause) => Effect.logWarning("recording a webhook attempt failed", cause))
      )

    const busy = () => [...inFlight].flatMap(([id, n]) => (n >= limits.perEndpoint ? [id] : []))

    const track = (endpointId: string, delta: number) => {
      const n = (inFlight.get(endpointId) ?? 0) + delta
      if (n === 0) inFlight.delete(endpointId)
      else inFlight.set(endpointId, n)
      total += delta
    }

    const fill = Effect.gen(function* () {
      let started = 0
      for (;;) {
        const free = limits.concurrency - total
        if (free <= 0) return started
        const now = yield* DateTime.now
        const claimed = yield* store.claim(now, Math.min(free, limits.perEndpoint * 4), busy())
        if (claimed.length === 0) return started
        for (const c of claimed) {
          track(c.attempt.endpointId, 1)
          yield* FiberSet.run(
            fibers,
            deliver(c).pipe(
              Effect.ensuring(
                Effect.suspend(() => {
                  track(c.attempt.endpointId, -1)
                  return wakeups.offer(undefined)
                })
              )
            )
          )
        }
        started += claimed.length
      }
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("claiming webhook attempts failed", cause), 0)
      )
    )

    const job: Work.Job = {
      name: JobName,
      ownWorker: true,
      runDue: Effect.gen(function* () {
        let handled = 0
        for (;;) {
          const now = yield* DateTime.now
          const claimed = yield* store.claim(now, 100, [])
          if (claimed.length === 0) return handled
          yield* Effect.forEach(claimed, deliver, { concurrency: limits.concurrency, discard: true })
          handled += claimed.length
        }
      }),
      nextDueAt: store.nextDueAt
    }

    return { job, fill, wakeups } satisfies DeliveryService
  })

export class Delivery extends Effect.Tag("laari/server/Delivery")<Delivery, DeliveryService>() {}

export const layer = (limits: Limits = defaultLimits) => Layer.scoped(Delivery, make(limits))

/** The core jobs and the deliveries, as the one list the workers and the manual clock run. */
export const jobs = Layer.effect(
  Work.Jobs,
  Effect.gen(function* () {
    const jobs = yield* Work.Jobs
    const delivery = yield* Delivery
    return [...jobs, delivery.job]
  })
)

/**
 * The real-time worker: fills its slots whenever the outbox notifies, an attempt finishes, or a second
 * passes (retries fall due without a notification). It runs on a manual clock too, where what is due at
 * the clock's now (a new event's first attempt) goes out at once and retries wait for the clock.
 */
export const worker = Layer.scopedDiscard(
  Effect.gen(function* () {
    const delivery = yield* Delivery
    const notified = yield* Wakeup.listen(DeliveryChannel)
    yield* Effect.forkScoped(Stream.runForEach(notified, () => delivery.wakeups.offer(undefined)))
    yield* Effect.forkScoped(
      delivery.wakeups.offer(undefined).pipe(Effect.repeat(Schedule.spaced("1 second")))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(delivery.wakeups.take, delivery.fill)))
  })
)
