/**
 * Customer notices to the wallet provider's notification service: with
 * `LAARI_NOTIFY_URL` set, every notice is queued in its own transaction (`Sql/NotificationOutbox`) and POSTed there by
 * this worker, signed per Standard Webhooks under the notify secret: core's `Notices` (signing, the
 * verdict, the count) run by `Dispatch`, sending through the webhooks' `Sender`. Retries follow
 * `Notice.RetryDelays` for up to a day; a one-time code is never sent after it expired.
 */
import { Notices as CoreNotices, Sender as CoreSender } from "@laari/core"
import { Context, Effect, Layer } from "effect"
import type * as Config from "../Platform/Config.js"
import * as Dispatch from "../Background/Dispatch.js"
import * as Sender from "../Webhooks/Sender.js"
import * as Signing from "../Webhooks/Signing.js"
import { ServerSecrets } from "../Platform/ServerSecrets.js"
import { Channel as WakeChannel } from "../Sql/NotificationOutbox.js"

export const JobName = "customer-notices"

/** The name of the generated signing secret in `server_secrets`. */
export const SecretName = "notify_signing"

export const UserAgent = "laari-notify/1"

/** Attempts once recorded, by outcome (`Notice.Results`): core's counter, for the metrics registry. */
export const Notices = CoreNotices.Counted

/** Where the notify secret comes from: `LAARI_NOTIFY_SECRET`, or made once and kept in the database. */
export interface SigningSecret {
  readonly secret: string
  readonly source: "env" | "database"
}

/** Where notices go, when they leave laari. */
export interface Channel {
  readonly url: string
  readonly signing: SigningSecret
  readonly dispatcher: Dispatch.Dispatcher
}

export interface NotifyService {
  /** `undefined` without `LAARI_NOTIFY_URL`: notices stay in laari (the wallet page). */
  readonly channel: Channel | undefined
}

export class Notify extends Context.Tag("laari/server/Notify")<Notify, NotifyService>() {}

/** The configured secret, else the deployment's own, made by the first process that needs it. */
export const signingSecret = (configured: string | undefined) =>
  configured !== undefined
    ? Effect.succeed<SigningSecret>({ secret: configured, source: "env" })
    : Effect.flatMap(ServerSecrets, (secrets) =>
        Effect.map(
          secrets.ensure(SecretName),
          (bytes): SigningSecret => ({
            secret: `${Signing.SecretPrefix}${Buffer.from(bytes).toString("base64")}`,
            source: "database"
          })
        )
      ).pipe(Effect.orDie)

const make = (url: string, configured: string | undefined) =>
  Effect.gen(function* () {
    const signing = yield* signingSecret(configured)
    const notices = yield* CoreNotices.Notices
    const target: CoreNotices.Channel = { url, secret: signing.secret }
    const sender: CoreSender.SenderService = {
      // The operator's own setting, not a merchant's input: an internal address is expected.
      send: (request) => Sender.send({ ...request, publicOnly: false, userAgent: UserAgent })
    }
    const dispatcher = yield* Dispatch.make(
      {
        name: JobName,
        claim: notices.claim,
        send: (claimed) =>
          notices.deliver(target, claimed).pipe(Effect.provideService(CoreSender.Sender, sender)),
        // One receiver: the limit per group is the limit.
        group: () => url,
        nextDueAt: notices.nextDueAt
      },
      { concurrency: 16, perGroup: 16 }
    )
    return { channel: { url, signing, dispatcher } } satisfies NotifyService
  })

/** `Notify`, over the engine's `Notices`: with `LAARI_NOTIFY_URL`, the channel that sends them. */
export const layer = (
  config: Config.ServerConfig
): Layer.Layer<Notify, never, ServerSecrets | CoreNotices.Notices> =>
  config.notifyUrl === undefined
    ? Layer.succeed(Notify, { channel: undefined })
    : Layer.scoped(Notify, make(config.notifyUrl, config.notifySecret))

/** The notices' job, for the server's list of jobs (`Server.jobs`): none when notices stay in laari. */
export const job = Effect.map(Notify, ({ channel }) => channel?.dispatcher.job)

/** The real-time worker, when notices leave laari. */
export const worker = Layer.scopedDiscard(
  Effect.flatMap(Notify, ({ channel }) =>
    channel === undefined ? Effect.void : Dispatch.work(WakeChannel, channel.dispatcher, 0.3)
  )
)
