/**
 * Wake-ups across processes: `LISTEN` on a channel that transactions `pg_notify` (delivered on commit),
 * on PostgreSQL on a connection of its own (`PgPool.Connector`: to the primary, after a failover the new
 * one) and on PGlite through the instance. A lost connection (an error, or its end) fails the stream,
 * which connects and listens again every second until it can; callers keep a slow poll as well, so a
 * wake-up lost while reconnecting only delays work, never loses it.
 *
 * Not `PgClient.listen`: its shared connection swallows errors, so a lost one went silent for good, and
 * it connects with the pool's options, which name no host when the pool follows a primary.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Option, Schedule, Stream } from "effect"
import pg from "pg"
import * as PgPool from "./Pg/PgPool.js"
import { PgliteClient } from "./Pglite/PgliteClient.js"

/** Why a listening stream ended: its connection failed or closed. */
class ListenLost extends Error {}

const onPostgres = (connector: PgPool.Connector["Type"], channel: string): Stream.Stream<string, Error> =>
  Stream.asyncPush<string, Error>((emit) =>
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = await connector.connect()
          const listeners = {
            notification: (m: pg.Notification) => {
              if (m.channel === channel && m.payload !== undefined) emit.single(m.payload)
            },
            error: (e: Error) => emit.fail(new ListenLost(`LISTEN ${channel}: ${e.message}`)),
            end: () => emit.fail(new ListenLost(`LISTEN ${channel}: the connection closed`))
          }
          client.on("notification", listeners.notification)
          client.on("error", listeners.error)
          client.on("end", listeners.end)
          try {
            await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
          } catch (e) {
            await client.end().catch(() => {})
            throw e
          }
          return { client, listeners }
        },
        catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
      }),
      ({ client, listeners }) =>
        Effect.promise(() => {
          client.off("notification", listeners.notification)
          client.off("error", listeners.error)
          client.off("end", listeners.end)
          return client.end().catch(() => {})
        }).pipe(Effect.timeoutOption("1 second"))
    )
  ).pipe(
    Stream.tapErrorCause((cause) => Effect.logWarning(`LISTEN ${channel} lost; listening again`, cause)),
    Stream.retry(Schedule.spaced("1 second"))
  )

export const listen = (channel: string): Effect.Effect<Stream.Stream<string>> =>
  Effect.gen(function* () {
    const connector = yield* Effect.serviceOption(PgPool.Connector)
    if (Option.isSome(connector)) return Stream.orDie(onPostgres(connector.value, channel))
    // A PgClient made elsewhere than `PgPool` (a test's): its own LISTEN, retried as well.
    const other = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isSome(other))
      return other.value.listen(channel).pipe(Stream.retry(Schedule.spaced("1 second")), Stream.orDie)
    const lite = yield* Effect.serviceOption(PgliteClient)
    if (Option.isSome(lite))
      return Stream.asyncPush<string>((emit) =>
        Effect.acquireRelease(
          // Under the client's permit: a LISTEN sent during a batch would take part of its answer.
          lite.value.exclusive(
            Effect.promise(() => lite.value.pglite.listen(channel, (payload) => emit.single(payload)))
          ),
          (unsubscribe) => lite.value.exclusive(Effect.promise(() => unsubscribe()))
        )
      )
    return Stream.never
  })
