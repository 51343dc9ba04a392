/**
 * The database of a server process: PostgreSQL when a URL is configured, else embedded PGlite (on disk,
 * or in memory without a data directory). Migrates at start and provides every core port over it (the
 * notice outbox too), the server's own (`Directory`, `ServerSecrets`, `EndedSessions`), core's
 * credential services (`ApiKeys`, `OAuthClients`), and `Crypto`.
 */
import type { MigrationError } from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ApiKeys, Audit, type Crypto, type NoticeOutbox, OAuthClients } from "@laari/core"
import { Effect, Layer } from "effect"
import type { Directory } from "../Platform/Directory.js"
import type { EndedSessions } from "../Platform/EndedSessions.js"
import * as Keys from "../Platform/Keys.js"
import { PoolStats } from "../Platform/PoolStats.js"
import type { ServerSecrets } from "../Platform/ServerSecrets.js"
import * as WallClock from "../Platform/WallClock.js"
import * as SqlDirectory from "./Directory.js"
import * as SqlEndedSessions from "./EndedSessions.js"
import * as Migrations from "./Migrations.js"
import * as NotificationOutbox from "./NotificationOutbox.js"
import * as PgPool from "./Pg/PgPool.js"
import * as PgliteClient from "./Pglite/PgliteClient.js"
import * as RowCache from "./RowCache.js"
import * as SqlServerSecrets from "./ServerSecrets.js"
import * as Store from "./Store.js"

export interface Config {
  /** `postgres://...`; unset: embedded PGlite. */
  readonly databaseUrl?: string | undefined
  /** PGlite's data directory; unset: in memory. Ignored with `databaseUrl`. */
  readonly dataDir?: string | undefined
  /** PostgreSQL's bounds on every wait (`PgPool.defaultBounds`: 5 s statements, 3 s locks, ...). */
  readonly bounds?: Partial<PgPool.Bounds> | undefined
  /** PostgreSQL pool size. Default 10. */
  readonly maxConnections?: number | undefined
  /**
   * The notification service's address (`LAARI_NOTIFY_URL`): with it every notice is also queued for it,
   * else kept in laari only. The one place the `Notifications` port is chosen (`NotificationOutbox.ports`).
   */
  readonly notifyUrl?: string | undefined
}

/**
 * The SQL client alone. The pg pool opens connections on demand and drops broken ones, so it recovers
 * by itself when the database comes back; while it is away, statements fail within the bounds of
 * `PgPool` and the adapters answer `ServiceUnavailable`. Building it fails if the database is
 * unreachable at start. With it, `PoolStats`: how busy the connections are. On PostgreSQL it also
 * provides `PgPool.Connector` (not in the type, as PGlite has none), which `Wakeup` looks up.
 */
export const clientLayer = (config: Config): Layer.Layer<SqlClient.SqlClient | PoolStats, SqlError> =>
  config.databaseUrl !== undefined
    ? PgPool.layer({
        url: config.databaseUrl,
        maxConnections: config.maxConnections ?? 10,
        bounds: { ...PgPool.defaultBounds, ...config.bounds }
      })
    : Layer.merge(PgliteClient.layer({ dataDir: config.dataDir }), pgliteStats)

/** PGlite is one in-process session, taken in turns: one connection, nothing else to tell. */
const pgliteStats = Layer.succeed(PoolStats, {
  counts: () => ({ total: 1, idle: undefined, waiting: undefined })
})

/** A statement that answers while the database does, for `/readyz`; from the SQL client of the context. */
export const probe: Effect.Effect<Effect.Effect<void, SqlError>, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql) => Effect.asVoid(sql`SELECT 1`)
)

/** The ports a database gives, core's and the server's, and core's credential services over them. */
export type Adapters =
  | Store.Ports
  | NoticeOutbox.NoticeOutbox
  | Directory
  | ServerSecrets
  | EndedSessions
  | OAuthClients.OAuthClients
  | ApiKeys.ApiKeys

/** Every adapter over an already migrated database; notices as `notifyUrl` says (`Config.notifyUrl`). */
export const adapters = (
  notifyUrl: string | undefined
): Layer.Layer<Adapters, never, SqlClient.SqlClient | Crypto.Crypto> =>
  Layer.mergeAll(
    SqlDirectory.layer,
    SqlServerSecrets.layer,
    SqlEndedSessions.layer,
    // Core's credential services over these ports: every front end authenticates through them. They note
    // the keys and clients they issue and revoke in the audit log, dated by the system's wall clock.
    Layer.merge(OAuthClients.OAuthClients.Default, ApiKeys.ApiKeys.Default).pipe(
      Layer.provide(Audit.Audit.Default),
      Layer.provide(WallClock.layer)
    )
  ).pipe(
    Layer.provideMerge(Store.layer),
    Layer.provideMerge(NotificationOutbox.ports(notifyUrl)),
    Layer.provide(RowCache.layer)
  )

/** Migrates, then provides the SQL client, `PoolStats`, every adapter (`adapters`) and `Crypto`. */
export const layer = (
  config: Config
): Layer.Layer<SqlClient.SqlClient | PoolStats | Adapters | Crypto.Crypto, SqlError | MigrationError> => {
  const migrated = Layer.effectDiscard(Migrations.run).pipe(Layer.provideMerge(clientLayer(config)))
  // node:crypto's hashes: the adapters hash every request's key (`Keys.nodeCrypto`).
  return adapters(config.notifyUrl).pipe(Layer.provideMerge(migrated), Layer.provideMerge(Keys.cryptoLayer))
}
