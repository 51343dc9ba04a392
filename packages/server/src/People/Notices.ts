/**
 * Messages to people (core's `PeopleNotices`): an invitation's link, queued in the invitation's own
 * transaction (`Sql/PeopleNotices`) and, with `LAARI_NOTIFY_URL` set, POSTed to the provider's
 * notification service by a job of its own on the customer notices' machinery: the same address and
 * signing secret (`Notify/Delivery.signingSecret`, Standard Webhooks), the same sender, the same leased
 * dispatch (`Background/Dispatch`) and retry rules (`Notice.verdict`), and never after the link expired.
 * The document is described with the customer notices' (docs/NOTIFICATIONS.md, `team_invitation`).
 *
 * On a development start (`LAARI_DEVELOPMENT=true`) the links not yet expired are readable by the
 * operator (`pendingInvitations`), there being no notification service to send them to.
 */
import {
  Sender as CoreSender,
  Crypto,
  type Errors,
  type Ids,
  Notice,
  PeopleNotices,
  type Role,
  WallClock,
  WebhookEndpoint
} from "@laari/core"
import { Context, DateTime, Effect, Layer } from "effect"
import * as Dispatch from "../Background/Dispatch.js"
import * as Delivery from "../Notify/Delivery.js"
import type * as Config from "../Platform/Config.js"
import type { ServerSecrets } from "../Platform/ServerSecrets.js"
import * as Store from "../Sql/PeopleNotices.js"
import * as Sender from "../Webhooks/Sender.js"

export const JobName = "people-notices"

/** What the notification service receives for an invitation (snake_case, Unix seconds, in this order). */
export interface InvitationDocument {
  /** The notice's id; the `webhook-id` of every attempt, so a receiver drops repeats by it. */
  readonly id: string
  readonly type: "team_invitation"
  readonly created: number
  /** When the link stops working: the notice is never sent after it. */
  readonly expires: number
  readonly livemode: false
  readonly recipient: { readonly email: string }
  readonly title: string
  readonly body: string
  readonly data: {
    readonly invitation_id: string
    readonly merchant_id: string
    readonly merchant_name: string
    readonly role: Role.MerchantRole
    /** The whole link, its token included. */
    readonly link: string
  }
}

const seconds = (t: DateTime.Utc) => Math.floor(DateTime.toEpochMillis(t) / 1000)

/** The notice id of an invitation's message: one message per invitation. */
export const noticeId = (invitationId: string): string => `pn_${invitationId}`

/** The document of `notice`, made `at`. */
export const invitationDocument = (
  notice: PeopleNotices.InvitationNotice,
  at: DateTime.Utc
): InvitationDocument => ({
  id: noticeId(notice.invitationId),
  type: "team_invitation",
  created: seconds(at),
  expires: seconds(notice.expiresAt),
  livemode: false,
  recipient: { email: notice.email },
  title: `Join ${notice.merchantName} on laari`,
  body: `You are invited to the ${notice.merchantName} team as ${notice.role}. Open the link to accept; it works once, until ${DateTime.formatIso(notice.expiresAt).slice(0, 16).replace("T", " ")} UTC.`,
  data: {
    invitation_id: notice.invitationId,
    merchant_id: notice.merchantId,
    merchant_name: notice.merchantName,
    role: notice.role,
    link: notice.link
  }
})

/**
 * `PeopleNotices` over the database: each message queued in the caller's transaction, to be sent when
 * `send` (a notification service is configured), else only kept for `pendingInvitations` until it expires.
 */
export const layer = (
  send: boolean
): Layer.Layer<PeopleNotices.PeopleNotices, never, Store.PeopleNoticesStore> =>
  Layer.effect(
    PeopleNotices.PeopleNotices,
    Effect.map(Store.PeopleNoticesStore, (store) => ({
      invitation: (notice) =>
        Effect.flatMap(DateTime.now, (now) => {
          const document = invitationDocument(notice, now)
          return store.insert(
            {
              id: document.id,
              kind: "team_invitation",
              merchantId: notice.merchantId,
              email: notice.email,
              document: JSON.stringify(document),
              createdAt: now,
              expiresAt: notice.expiresAt
            },
            send
          )
        })
    }))
  )

/** `layer` as the configuration has it, with its store. */
export const configuredLayer = (
  config: Pick<Config.ServerConfig, "notifyUrl">
): Layer.Layer<
  PeopleNotices.PeopleNotices | Store.PeopleNoticesStore,
  never,
  Layer.Layer.Context<typeof Store.layer>
> => layer(config.notifyUrl !== undefined).pipe(Layer.provideMerge(Store.layer))

// ---------------------------------------------------------------------------------------------------------
// The development read

/** An invitation's link not yet expired, as a development start shows it. */
export interface PendingInvitation {
  readonly invitationId: string
  readonly email: string
  readonly role: Role.MerchantRole
  readonly link: string
  readonly createdAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
  /** Attempts made to send it so far (none without a notification service). */
  readonly attempts: number
}

/**
 * The merchant's invitation links not yet expired nor delivered, newest first; the expired ones are
 * blanked first. Only for `LAARI_DEVELOPMENT=true` (the operator API checks): the links are secrets.
 */
export const pendingInvitations = (
  merchantId: Ids.MerchantId
): Effect.Effect<ReadonlyArray<PendingInvitation>, Errors.ServiceUnavailable, Store.PeopleNoticesStore> =>
  Effect.gen(function* () {
    const store = yield* Store.PeopleNoticesStore
    const now = yield* DateTime.now
    yield* store.expire(now)
    const entries = yield* store.pending(merchantId, now)
    return entries.flatMap((entry): ReadonlyArray<PendingInvitation> => {
      if (entry.document === null || entry.kind !== "team_invitation") return []
      const document = JSON.parse(entry.document) as InvitationDocument
      return [
        {
          invitationId: document.data.invitation_id,
          email: entry.email,
          role: document.data.role,
          link: document.data.link,
          createdAt: entry.createdAt,
          expiresAt: entry.expiresAt,
          attempts: entry.attempts
        }
      ]
    })
  })

// ---------------------------------------------------------------------------------------------------------
// Delivery

/** Where people's notices go, when they leave laari: the customer notices' address and secret. */
export interface Channel {
  readonly url: string
  readonly dispatcher: Dispatch.Dispatcher
}

export interface DeliveryService {
  /** `undefined` without `LAARI_NOTIFY_URL`. */
  readonly channel: Channel | undefined
}

export class PeopleNoticesDelivery extends Context.Tag("laari/server/PeopleNoticesDelivery")<
  PeopleNoticesDelivery,
  DeliveryService
>() {}

/** Signs, sends and records one leased notice; never fails (a failure to record leaves the lease to run out). */
const deliverOne = (url: string, secret: string, claimed: Store.Claimed) =>
  Effect.gen(function* () {
    const store = yield* Store.PeopleNoticesStore
    const crypto = yield* Crypto.Crypto
    const wall = yield* WallClock.WallClock
    const sender = yield* CoreSender.Sender
    // The wall clock: the receiver checks the timestamp against its own, within minutes.
    const timestamp = yield* wall.nowSeconds
    const response = yield* sender.send({
      url,
      headers: yield* WebhookEndpoint.signedHeaders(crypto, [secret], claimed.id, timestamp, claimed.body),
      body: claimed.body
    })
    const at = yield* DateTime.now
    yield* store.complete(claimed, { response, verdict: Notice.verdict(claimed, response, at), at })
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("recording a people notice attempt failed", cause))
  )

const make = (url: string, configured: string | undefined) =>
  Effect.gen(function* () {
    const signing = yield* Delivery.signingSecret(configured)
    const context = yield* Effect.context<Store.PeopleNoticesStore | Crypto.Crypto | WallClock.WallClock>()
    const store = Context.get(context, Store.PeopleNoticesStore)
    const sender: CoreSender.SenderService = {
      // The operator's own setting, not a merchant's input: an internal address is expected.
      send: (request) => Sender.send({ ...request, publicOnly: false, userAgent: Delivery.UserAgent })
    }
    const dispatcher = yield* Dispatch.make(
      {
        name: JobName,
        claim: (now, limit) => store.claim(now, limit),
        send: (claimed) =>
          deliverOne(url, signing.secret, claimed).pipe(
            Effect.provideService(CoreSender.Sender, sender),
            Effect.provide(context)
          ),
        group: () => url,
        nextDueAt: store.nextDueAt
      },
      { concurrency: 4, perGroup: 4 }
    )
    return { channel: { url, dispatcher } } satisfies DeliveryService
  })

/** The delivery of people's notices: with `LAARI_NOTIFY_URL`, the job that sends them. */
export const deliveryLayer = (
  config: Pick<Config.ServerConfig, "notifyUrl" | "notifySecret">
): Layer.Layer<
  PeopleNoticesDelivery,
  never,
  ServerSecrets | Store.PeopleNoticesStore | Crypto.Crypto | WallClock.WallClock
> =>
  config.notifyUrl === undefined
    ? Layer.succeed(PeopleNoticesDelivery, { channel: undefined })
    : Layer.scoped(PeopleNoticesDelivery, make(config.notifyUrl, config.notifySecret))

/** The job, for the server's list (`Server.jobs`): none when notices stay in laari. */
export const job = Effect.map(PeopleNoticesDelivery, ({ channel }) => channel?.dispatcher.job)

/**
 * The real-time worker, when notices leave laari: it polls every second and listens for no wake-up,
 * invitations being few (no connection held for a `LISTEN`, and on PGlite no second listener).
 */
export const worker = Layer.scopedDiscard(
  Effect.flatMap(PeopleNoticesDelivery, ({ channel }) =>
    channel === undefined ? Effect.void : Dispatch.work(undefined, channel.dispatcher, 0.35)
  )
)
