/**
 * The delivery worker. Due attempts are leased from the log (`WebhookStore.claim`), signed at the moment
 * they are sent, sent, and recorded with what follows from them (the next attempt, the endpoint's
 * health). The worker itself is `Dispatch`'s: up to `concurrency` attempts in flight in this process.
 * What one endpoint or one merchant may hold is capped by the claim, over every process on the database,
 * so a merchant's slow or dead endpoints hold a bounded share and other merchants' deliveries go on.
 */
import { Crypto, Counters, Work, Webhook } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Dispatch from "../Background/Dispatch.js"
import { DeliveryChannel } from "../Sql/Events.js"
import * as Address from "./Address.js"
import * as Sender from "./Sender.js"
import * as Signing from "./Signing.js"
import type { Caps, Claimed } from "./Records.js"
import { WebhookStore } from "./Sql.js"

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

export interface Limits extends Caps {
  /** Attempts in flight per process. */
  readonly concurrency: number
}

/**
 * A merchant's environment holds at most half of one process's slots, an endpoint an eighth, and an
 * endpoint whose attempts fail (time out, refuse, answer an error) one, until an attempt succeeds: 16
 * hanging endpoints (`Webhook.MaxEndpoints`) then hold 16 slots, after their first attempts time out.
 */
export const defaultLimits: Limits = {
  concurrency: 64,
  perEndpoint: 8,
  perFailingEndpoint: 1,
  perMerchant: 32
}

export type DeliveryService = Dispatch.Dispatcher

const make = (limits: Limits) =>
  Effect.gen(function* () {
    const store = yield* WebhookStore
    const crypto = yield* Crypto.Crypto
    const config = yield* ServerConfigTag
    const policy: Address.Policy = { allowPrivate: config.webhookAllowPrivate }

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
          publicOnly: Address.mustBePublic(policy)
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

    return yield* Dispatch.make(
      {
        name: JobName,
        claim: (now, limit, busy) => store.claim(now, limit, busy, limits),
        send: deliver,
        group: (c) => c.attempt.endpointId,
        nextDueAt: store.nextDueAt
      },
      { concurrency: limits.concurrency, perGroup: limits.perEndpoint }
    )
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
  Effect.flatMap(Delivery, (delivery) => Dispatch.work(DeliveryChannel, delivery))
)
