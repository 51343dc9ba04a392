/**
 * The delivery worker: core's `Deliveries` run by `Dispatch`, up to `concurrency` attempts in flight in
 * this process. Due attempts are leased from the log (`Deliveries.claim`) and each is delivered
 * (`Deliveries.deliver`: signed, sent by the server's `Sender` under its address rules, recorded). What
 * one endpoint or one merchant may hold is capped by the claim, over every process on the database, so a
 * merchant's slow or dead endpoints hold a bounded share and other merchants' deliveries go on.
 */
import { Deliveries, type DeliveriesStore, SecretSealer, Sender as CoreSender } from "@laari/core"
import { Effect, Layer } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Dispatch from "../Background/Dispatch.js"
import { DeliveryChannel } from "../Sql/Events.js"
import * as Sender from "./Sender.js"

export const JobName = "webhook-deliveries"

export interface Limits extends DeliveriesStore.Caps {
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
    const deliveries = yield* Deliveries.Deliveries
    const sealer = yield* SecretSealer.SecretSealer
    const config = yield* ServerConfigTag
    const sender = Sender.port({ allowPrivate: config.webhookAllowPrivate })
    return yield* Dispatch.make(
      {
        name: JobName,
        claim: (now, limit, busy) => deliveries.claim(now, limit, busy, limits),
        send: (claimed) =>
          deliveries
            .deliver(claimed)
            .pipe(
              Effect.provideService(CoreSender.Sender, sender),
              Effect.provideService(SecretSealer.SecretSealer, sealer)
            ),
        group: (c) => c.attempt.endpointId,
        nextDueAt: deliveries.nextDueAt
      },
      { concurrency: limits.concurrency, perGroup: limits.perEndpoint }
    )
  })

export class Delivery extends Effect.Tag("laari/server/Delivery")<Delivery, DeliveryService>() {}

export const layer = (limits: Limits = defaultLimits) => Layer.scoped(Delivery, make(limits))

/** The deliveries' job, for the server's list of jobs (`Server.jobs`). */
export const job = Effect.map(Delivery, (delivery) => delivery.job)

/**
 * The real-time worker: fills its slots whenever the outbox notifies, an attempt finishes, or a second
 * passes (retries fall due without a notification). It runs on a manual clock too, where what is due at
 * the clock's now (a new event's first attempt) goes out at once and retries wait for the clock.
 */
export const worker = Layer.scopedDiscard(
  Effect.flatMap(Delivery, (delivery) => Dispatch.work(DeliveryChannel, delivery))
)
