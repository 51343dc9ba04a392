/**
 * The deliveries service: an endpoint's log read, an event resent, and one leased attempt delivered:
 * signed at the moment it is sent (the signing secrets opened by the host's `SecretSealer`), sent by
 * the host's `Sender`, recorded with what follows from it (`Webhook.verdict`) and counted. Leasing and
 * its caps are the store's (`DeliveriesStore.claim`); a host's worker claims and calls `deliver`.
 */
import { DateTime, Effect } from "effect"
import { Crypto } from "../kernel/Crypto.js"
import type { Tenant } from "../kernel/Ids.js"
import * as Counters from "../kernel/Counters.js"
import * as DeliveriesStore from "./DeliveriesStore.js"
import * as Webhook from "./Webhook.js"
import * as WebhookEndpoint from "./WebhookEndpoint.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { WallClock } from "../kernel/WallClock.js"
import { SecretSealer } from "./SecretSealer.js"
import { Sender } from "./Sender.js"
import { WebhookEndpointsStore } from "./WebhookEndpointsStore.js"

/** Attempts once recorded, by `Webhook.Result`. */
export const Attempts = Counters.counter({
  name: "laari_webhook_deliveries_total",
  description: "Webhook delivery attempts by outcome: delivered, failed (retried), gave_up",
  label: "outcome",
  values: Webhook.Results
})

export class Deliveries extends Effect.Service<Deliveries>()("laari/Deliveries", {
  effect: Effect.gen(function* () {
    const store = yield* DeliveriesStore.DeliveriesStore
    const endpoints = yield* WebhookEndpointsStore
    const crypto = yield* Crypto
    const wall = yield* WallClock

    const endpoint = (owner: WebhookEndpoint.Owner, id: string) =>
      Effect.flatMap(endpoints.find(owner, id), (e) =>
        e === undefined ? Effect.fail(new Webhook.WebhookEndpointNotFound()) : Effect.succeed(e)
      )

    /** An endpoint's log, newest first; `owner` is a merchant's environment, or (ops) the merchant. */
    const list = Telemetry.fn("Deliveries.list")(function* (
      owner: WebhookEndpoint.Owner,
      endpointId: string,
      filter: DeliveriesStore.Filter
    ) {
      return yield* store.list((yield* endpoint(owner, endpointId)).id, filter)
    })

    /** One more attempt of one of the tenant's events to the endpoint, due now, never retried. */
    const resend = Telemetry.fn("Deliveries.resend")(function* (
      tenant: Tenant,
      endpointId: string,
      eventId: string
    ) {
      const target = yield* endpoint(tenant, endpointId)
      const attempt = yield* store.resend(target, eventId, yield* crypto.uuid, yield* DateTime.now)
      return attempt ?? (yield* new Webhook.EventNotFound())
    })

    /**
     * Signs, sends and records one leased attempt; never fails: a failure to record leaves the lease to
     * run out, and the attempt is made again.
     */
    const deliver = Telemetry.fn("Deliveries.deliver")(
      function* (claimed: DeliveriesStore.Claimed) {
        const sender = yield* Sender
        const sealer = yield* SecretSealer
        const now = yield* DateTime.now
        const { attempt } = claimed
        const secrets = yield* Effect.forEach(Webhook.signingSecrets(claimed.secrets, now), (sealed) =>
          sealer.open(attempt.endpointId, sealed)
        )
        // Receivers check webhook-timestamp against their own clock (Standard Webhooks: 5 minutes), so it
        // is the wall time even when the service's clock is manual; the event's `created` keeps that clock.
        const timestamp = yield* wall.nowSeconds
        const response = yield* sender.send({
          url: claimed.url,
          headers: yield* WebhookEndpoint.signedHeaders(
            crypto,
            secrets,
            attempt.eventId,
            timestamp,
            claimed.body
          ),
          body: claimed.body
        })
        const verdict = Webhook.verdict(attempt, response, now)
        yield* store.complete(claimed, { response, verdict, at: now, nextId: yield* crypto.uuid })
        yield* Counters.count(Attempts, verdict.result)
      },
      Effect.catchAllCause((cause) => Effect.logWarning("recording a webhook attempt failed", cause))
    )

    return {
      list,
      resend,
      /** Leases due attempts within `caps` (`DeliveriesStore.claim`), for `deliver`. */
      claim: (now: DateTime.Utc, limit: number, busy: ReadonlyArray<string>, caps: DeliveriesStore.Caps) =>
        store.claim(now, limit, busy, caps),
      deliver,
      nextDueAt: store.nextDueAt
    }
  })
}) {}
