/**
 * What a request reads every time but rarely changes: API keys by hash and merchants by id. Each process
 * keeps them in memory; a change (a key revoked, a merchant's features set) is announced with
 * `pg_notify` in the changing transaction and drops the entry in every process when it commits. The
 * changing process drops it at once, and every entry expires after `TtlMs` in case a notification was
 * lost while a listening connection reconnected.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Deferred, Effect, Layer, Option, Stream } from "effect"
import * as Wakeup from "./Wakeup.js"

export const Channel = "laari_cache"

/** The longest an entry lives without news. */
export const TtlMs = 5_000

const wallClock = Clock.make()

/** Entries kept at most; past it the oldest go first. */
const MaxEntries = 10_000

export interface RowCacheService {
  /** The cached value of `key`, or `load` run and its value kept (when defined). */
  readonly through: <A, E, R>(
    key: string,
    load: Effect.Effect<A | undefined, E, R>
  ) => Effect.Effect<A | undefined, E, R>
  /** Drops `key` here now and, on commit, in every process: run in the changing transaction. */
  readonly invalidate: (key: string) => Effect.Effect<void, SqlError>
}

export class RowCache extends Context.Tag("laari/server/RowCache")<RowCache, RowCacheService>() {}

export const cacheKey = {
  apiKey: (hash: string) => `key:${hash}`,
  merchant: (id: string) => `merchant:${id}`
}

export const layer: Layer.Layer<RowCache, never, SqlClient.SqlClient> = Layer.scoped(
  RowCache,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const entries = new Map<string, { readonly value: unknown; readonly at: number }>()
    // Entries loaded while an invalidation was on its way must not outlive it: every drop bumps the
    // generation, and a load that began in an older generation is not kept.
    let generation = 0
    const drop = (key: string) => {
      generation++
      entries.delete(key)
    }
    const notified = yield* Wakeup.listen(Channel)
    // Ready once a notification of its own comes back: a change committed after that reaches this
    // process. Bounded: without it, the TTL still bounds how long a stale entry lives.
    const token = `ready:${crypto.randomUUID()}`
    const listening = yield* Deferred.make<void>()
    yield* Effect.forkScoped(
      Stream.runForEach(notified, (key) =>
        key === token ? Deferred.succeed(listening, undefined) : Effect.sync(() => drop(key))
      )
    )
    if (notified !== Stream.never)
      yield* sql`SELECT pg_notify(${Channel}, ${token})`.pipe(
        Effect.zipRight(Deferred.await(listening).pipe(Effect.timeoutOption("10 millis"))),
        Effect.repeat({ until: Option.isSome, times: 200 }),
        Effect.catchAll(() => Effect.void),
        // Wall time: a manual or test clock may never move.
        Effect.withClock(wallClock)
      )

    const through = <A, E, R>(key: string, load: Effect.Effect<A | undefined, E, R>) =>
      Effect.suspend(() => {
        const hit = entries.get(key)
        if (hit !== undefined && Date.now() - hit.at < TtlMs) return Effect.succeed(hit.value as A)
        const began = generation
        return Effect.tap(load, (value) =>
          Effect.sync(() => {
            if (value === undefined || began !== generation) return
            if (entries.size >= MaxEntries) entries.delete(entries.keys().next().value!)
            entries.set(key, { value, at: Date.now() })
          })
        )
      })

    const invalidate = (key: string) =>
      Effect.zipRight(
        Effect.sync(() => drop(key)),
        sql`SELECT pg_notify(${Channel}, ${key})`.pipe(Effect.asVoid)
      )

    return { through, invalidate }
  })
)
