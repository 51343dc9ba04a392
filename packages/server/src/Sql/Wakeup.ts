/**
 * Wake-ups across processes: `LISTEN` on a channel that transactions `pg_notify` (delivered on commit),
 * on PostgreSQL through `PgClient.listen` (its own connection) and on PGlite through the instance.
 * A lost connection is listened to again; callers keep a slow poll as well, so a wake-up lost while
 * reconnecting only delays work, never loses it.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Option, Schedule, Stream } from "effect"
import { PgliteClient } from "./PgliteClient.js"

export const listen = (channel: string): Effect.Effect<Stream.Stream<string>> =>
  Effect.gen(function* () {
    const pg = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isSome(pg))
      return pg.value.listen(channel).pipe(
        Stream.tapErrorCause((cause) => Effect.logWarning(`LISTEN ${channel} lost; listening again`, cause)),
        Stream.retry(Schedule.spaced("1 second")),
        Stream.orDie
      )
    const lite = yield* Effect.serviceOption(PgliteClient)
    if (Option.isSome(lite))
      return Stream.asyncPush<string>((emit) =>
        Effect.acquireRelease(
          Effect.promise(() => lite.value.pglite.listen(channel, (payload) => emit.single(payload))),
          (unsubscribe) => Effect.promise(() => unsubscribe())
        )
      )
    return Stream.never
  })
