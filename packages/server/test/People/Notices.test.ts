/**
 * People's notices (`People/Notices`, `Sql/PeopleNotices`) on both backends: an invitation's message is
 * queued in the caller's transaction (a rollback leaves none); with a notification service it is POSTed
 * there signed per Standard Webhooks (verified by the `standardwebhooks` library) as the documented
 * `team_invitation` document, and its link is blanked once delivered; one that expired is never sent,
 * and a failure whose retry would come after the expiry is dropped, blanked too. Without a service the
 * messages are only kept, the links readable on a development start (`pendingInvitations`) until they
 * expire.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect } from "@effect/vitest"
import { type Ids, PeopleNotices, type Work } from "@laari/core"
import { randomUUID } from "node:crypto"
import { DateTime, Duration, Effect, Layer } from "effect"
import { Webhook as StandardWebhook } from "standardwebhooks"
import * as Notices from "../../src/People/Notices.js"
import * as Store from "../../src/Sql/PeopleNotices.js"
import * as SqlServerSecrets from "../../src/Sql/ServerSecrets.js"
import * as Signing from "../../src/Webhooks/Signing.js"
import * as R from "../support/Receiver.js"
import * as TestDatabase from "../support/TestDatabase.js"

const headersOf = (r: R.Received) => ({
  "webhook-id": String(r.headers["webhook-id"]),
  "webhook-timestamp": String(r.headers["webhook-timestamp"]),
  "webhook-signature": String(r.headers["webhook-signature"])
})

const merchant = () => randomUUID() as Ids.MerchantId

const notice = (
  merchantId: Ids.MerchantId,
  expiresAt: DateTime.Utc,
  email = "new.member@example.mv"
): PeopleNotices.InvitationNotice => {
  const invitationId = `inv_${randomUUID().replace(/-/g, "")}`
  return {
    invitationId,
    merchantId,
    merchantName: "Hulhumalé Bakery",
    email,
    role: "finance",
    link: `https://pay.example.mv/dashboard/invitations/token-of-${invitationId}`,
    expiresAt
  }
}

/** The port and its store, queuing for a notification service when `send`. */
const queueing = (send: boolean) => Notices.layer(send).pipe(Layer.provideMerge(Store.layer))

/** The job over a receiver at `url`, signing with `secret`. */
const deliveryTo = (url: string, secret: string) =>
  Notices.deliveryLayer({ notifyUrl: url, notifySecret: secret }).pipe(
    Layer.provideMerge(Store.layer),
    Layer.provideMerge(SqlServerSecrets.layer)
  )

/** Runs the job's due work once, as the manual clock does. */
const runDue = Effect.flatMap(Notices.job, (job) => (job as Work.Job).runDue)

const row = (id: string) =>
  Effect.flatMap(Store.PeopleNoticesStore, (store) => store.find(id)).pipe(Effect.provide(Store.layer))

const withReceiver = <A, E, R>(f: (receiver: R.Receiver) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => R.start()),
    f,
    (receiver) => Effect.promise(() => receiver.close())
  )

TestDatabase.eachBackend("people's notices", (it) => {
  it.effect("queued in the caller's transaction: a rollback leaves no message", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const port = yield* PeopleNotices.PeopleNotices
      const m = merchant()
      const kept = notice(m, DateTime.unsafeMake(Date.now() + 3_600_000))
      const dropped = notice(m, DateTime.unsafeMake(Date.now() + 3_600_000))
      yield* sql.withTransaction(port.invitation(kept))
      yield* sql
        .withTransaction(Effect.zipRight(port.invitation(dropped), Effect.fail("refused")))
        .pipe(Effect.ignore)
      expect(yield* row(Notices.noticeId(dropped.invitationId))).toBeUndefined()
      const entry = yield* row(Notices.noticeId(kept.invitationId))
      expect(entry).toMatchObject({ kind: "team_invitation", merchantId: m, email: kept.email, attempts: 0 })
      // Without a notification service nothing is due: the message waits to be read, not sent.
      expect(entry?.nextAttemptAt).toBeNull()
      expect(JSON.parse(entry!.document!).data.link).toBe(kept.link)
    }).pipe(Effect.provide(queueing(false)))
  )

  it.effect("delivered signed per Standard Webhooks as the documented document; the link is then gone", () =>
    withReceiver((receiver) =>
      Effect.gen(function* () {
        yield* TestDatabase.reset
        const secret = Signing.generateSecret()
        const port = yield* PeopleNotices.PeopleNotices
        const sql = yield* SqlClient.SqlClient
        const m = merchant()
        const expiresAt = DateTime.unsafeMake(Math.floor(Date.now() / 1000 + 72 * 3600) * 1000)
        const n = notice(m, expiresAt)
        const id = Notices.noticeId(n.invitationId)
        yield* sql.withTransaction(port.invitation(n))
        expect((yield* row(id))?.nextAttemptAt).not.toBeNull()

        yield* runDue.pipe(Effect.provide(deliveryTo(receiver.url("/notify"), secret)))
        expect(receiver.received.length).toBe(1)
        const got = receiver.received[0]!
        expect(got.path).toBe("/notify")
        expect(got.headers["webhook-id"]).toBe(id)
        expect(got.headers["user-agent"]).toBe("laari-notify/1")
        const document = new StandardWebhook(secret).verify(got.body, headersOf(got)) as Record<
          string,
          unknown
        >
        expect(Object.keys(document)).toEqual([
          "id",
          "type",
          "created",
          "expires",
          "livemode",
          "recipient",
          "title",
          "body",
          "data"
        ])
        expect(document).toMatchObject({
          id,
          type: "team_invitation",
          expires: DateTime.toEpochMillis(expiresAt) / 1000,
          livemode: false,
          recipient: { email: n.email },
          data: {
            invitation_id: n.invitationId,
            merchant_id: m,
            merchant_name: "Hulhumalé Bakery",
            role: "finance",
            link: n.link
          }
        })
        expect(Math.abs((document.created as number) - Date.now() / 1000)).toBeLessThan(60)
        expect(document.title).toContain("Hulhumalé Bakery")
        expect(document.body).toContain("finance")
        expect(() => new StandardWebhook(Signing.generateSecret()).verify(got.body, headersOf(got))).toThrow()
        expect(() =>
          new StandardWebhook(secret).verify(got.body.replace("finance", "owner"), headersOf(got))
        ).toThrow()

        const after = yield* row(id)
        expect(after?.deliveredAt).not.toBeNull()
        expect(after?.document).toBeNull()
        expect(after).toMatchObject({ attempts: 1, lastStatus: 200, nextAttemptAt: null })
        // Sent once: nothing more is due.
        yield* runDue.pipe(Effect.provide(deliveryTo(receiver.url("/notify"), secret)))
        expect(receiver.received.length).toBe(1)
        expect(yield* Notices.pendingInvitations(m).pipe(Effect.provide(Store.layer))).toEqual([])
      }).pipe(Effect.provide(queueing(true)))
    )
  )

  it.effect(
    "never sent after it expired: the expired one is blanked unsent, a failure past the expiry dropped",
    () =>
      withReceiver((receiver) =>
        Effect.gen(function* () {
          yield* TestDatabase.reset
          const secret = Signing.generateSecret()
          const port = yield* PeopleNotices.PeopleNotices
          const sql = yield* SqlClient.SqlClient
          const m = merchant()
          const late = notice(m, DateTime.unsafeMake(Date.now() - 1_000))
          yield* sql.withTransaction(port.invitation(late))
          // Expiring in 3 s: the first attempt fails, and the retry (5 s on) would come after the expiry.
          const soon = notice(m, DateTime.unsafeMake(Date.now() + 3_000))
          yield* sql.withTransaction(port.invitation(soon))
          receiver.answer = () => ({ status: 503 })

          yield* runDue.pipe(Effect.provide(deliveryTo(receiver.url("/notify"), secret)))
          const sent = receiver.received.map((r) => r.headers["webhook-id"])
          expect(sent).toEqual([Notices.noticeId(soon.invitationId)])
          const expired = yield* row(Notices.noticeId(late.invitationId))
          expect(expired).toMatchObject({ document: null, attempts: 0, deliveredAt: null })
          expect(expired?.lastError).toBe(Store.Reasons.expired)
          const dropped = yield* row(Notices.noticeId(soon.invitationId))
          expect(dropped).toMatchObject({ document: null, attempts: 1, deliveredAt: null, lastStatus: 503 })
          expect(dropped?.nextAttemptAt).toBeNull()
          yield* runDue.pipe(Effect.provide(deliveryTo(receiver.url("/notify"), secret)))
          expect(receiver.received.length).toBe(1)
        }).pipe(Effect.provide(queueing(true)))
      )
  )

  it.effect("a failure with time left is tried again later, not at once", () =>
    withReceiver((receiver) =>
      Effect.gen(function* () {
        yield* TestDatabase.reset
        const secret = Signing.generateSecret()
        const port = yield* PeopleNotices.PeopleNotices
        const sql = yield* SqlClient.SqlClient
        const n = notice(merchant(), DateTime.unsafeMake(Date.now() + 3_600_000))
        yield* sql.withTransaction(port.invitation(n))
        receiver.answer = () => ({ status: 500 })
        yield* runDue.pipe(Effect.provide(deliveryTo(receiver.url("/notify"), secret)))
        const failed = yield* row(Notices.noticeId(n.invitationId))
        expect(failed).toMatchObject({ attempts: 1, lastStatus: 500, deliveredAt: null })
        expect(failed?.document).not.toBeNull()
        const wait = DateTime.distance(DateTime.unsafeMake(Date.now()), failed!.nextAttemptAt!)
        expect(Duration.toMillis(wait)).toBeGreaterThan(3_000)
        expect(Duration.toMillis(wait)).toBeLessThanOrEqual(5_000)
        yield* runDue.pipe(Effect.provide(deliveryTo(receiver.url("/notify"), secret)))
        expect(receiver.received.length).toBe(1)
      }).pipe(Effect.provide(queueing(true)))
    )
  )

  it.effect(
    "a development start reads the merchant's links not yet expired, newest first; expired ones go",
    () =>
      Effect.gen(function* () {
        yield* TestDatabase.reset
        const port = yield* PeopleNotices.PeopleNotices
        const sql = yield* SqlClient.SqlClient
        const [m, other] = [merchant(), merchant()]
        const first = notice(m, DateTime.unsafeMake(Date.now() + 3_600_000), "first@example.mv")
        const second = notice(m, DateTime.unsafeMake(Date.now() + 7_200_000), "second@example.mv")
        const expired = notice(m, DateTime.unsafeMake(Date.now() - 1), "late@example.mv")
        const elsewhere = notice(other, DateTime.unsafeMake(Date.now() + 3_600_000))
        for (const n of [first, expired, second, elsewhere]) yield* sql.withTransaction(port.invitation(n))
        const pending = yield* Notices.pendingInvitations(m)
        expect(pending.map((p) => [p.email, p.link, p.role])).toEqual([
          ["second@example.mv", second.link, "finance"],
          ["first@example.mv", first.link, "finance"]
        ])
        expect(pending[0]?.invitationId).toBe(second.invitationId)
        expect(DateTime.toEpochMillis(pending[0]!.expiresAt)).toBe(DateTime.toEpochMillis(second.expiresAt))
        // The expired link is not kept.
        expect((yield* row(Notices.noticeId(expired.invitationId)))?.document).toBeNull()
        expect((yield* Notices.pendingInvitations(other)).map((p) => p.link)).toEqual([elsewhere.link])
      }).pipe(Effect.provide(queueing(false)))
  )
})
