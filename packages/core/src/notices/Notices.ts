/**
 * The notices service: one leased notice delivered to the wallet provider's notification service, signed
 * (Standard Webhooks, under the channel's secret) at the moment it is sent by the host's `Sender`,
 * recorded with what follows from it (`Notice.verdict`) and counted. Wired by `Engine.layer` over the
 * host's `NoticeOutbox`, like `Deliveries` over its `DeliveriesStore`: a host's worker claims and calls
 * `deliver` with its channel (where notices go), the `Sender` provided.
 */
import { DateTime, Effect } from "effect"
import { Crypto } from "../kernel/Crypto.js"
import * as Counters from "../kernel/Counters.js"
import { Sender } from "../webhooks/Sender.js"
import { signedHeaders } from "../webhooks/WebhookEndpoint.js"
import * as Notice from "./Notice.js"
import { type Claimed, NoticeOutbox } from "./NoticeOutbox.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { WallClock } from "../kernel/WallClock.js"

/** Attempts once recorded, and notices expired unsent, by `Notice.Result`. */
export const Counted = Counters.counter({
  name: "laari_customer_notices_total",
  description: "Customer notice deliveries to the notification service by outcome",
  label: "outcome",
  values: Notice.Results
})

/** Where notices go: the notification service's address, and the secret (`whsec_...`) signing them. */
export interface Channel {
  readonly url: string
  readonly secret: string
}

export class Notices extends Effect.Service<Notices>()("laari/Notices", {
  effect: Effect.gen(function* () {
    const outbox = yield* NoticeOutbox
    const crypto = yield* Crypto
    const wall = yield* WallClock

    /**
     * Signs, sends to `channel` and records one leased notice; never fails: a failure to record leaves
     * the lease to run out, and the notice is sent again, with the same id.
     */
    const deliver = Telemetry.fn("Notices.deliver")(
      function* (channel: Channel, claimed: Claimed) {
        const sender = yield* Sender
        // The wall clock, not the service's (a manual one in tests and demos): the receiver checks the
        // timestamp against its own clock, within minutes.
        const timestamp = yield* wall.nowSeconds
        const response = yield* sender.send({
          url: channel.url,
          headers: yield* signedHeaders(crypto, [channel.secret], claimed.id, timestamp, claimed.body),
          body: claimed.body
        })
        const at = yield* DateTime.now
        const verdict = Notice.verdict(claimed, response, at)
        yield* outbox.complete(claimed, { response, verdict, at })
        yield* Counters.count(Counted, verdict.result)
      },
      Effect.catchAllCause((cause) => Effect.logWarning("recording a customer notice attempt failed", cause))
    )

    return {
      /** Records the notices that expired unsent (counted), then leases up to `limit` due ones. */
      claim: (now: DateTime.Utc, limit: number) =>
        Effect.flatMap(outbox.expire(now), (expired) =>
          Effect.zipRight(Counters.count(Counted, "expired", expired), outbox.claim(now, limit))
        ),
      deliver,
      nextDueAt: outbox.nextDueAt
    }
  })
}) {}
