/**
 * The database of a server process: PostgreSQL when a URL is configured, else embedded PGlite (on disk,
 * or in memory without a data directory). Migrates at start and provides every core port over it, the
 * `Directory`, and `Crypto`.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import type { MigrationError } from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Crypto } from "@laari/core"
import { Duration, Layer, Redacted } from "effect"
import * as Directory from "./Directory.js"
import * as Migrations from "./Migrations.js"
import * as PgliteClient from "./PgliteClient.js"
import * as Store from "./Store.js"

export interface Config {
  /** `postgres://...`; unset: embedded PGlite. */
  readonly databaseUrl?: string | undefined
  /** PGlite's data directory; unset: in memory. Ignored with `databaseUrl`. */
  readonly dataDir?: string | undefined
  /** How long to wait for a PostgreSQL connection before answering `ServiceUnavailable`. Default 5 s. */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** PostgreSQL pool size. Default 10. */
  readonly maxConnections?: number | undefined
}

/**
 * The SQL client alone. The pg pool opens connections on demand and drops broken ones, so it recovers
 * by itself when the database comes back; while it is away, statements fail fast (connect timeout) and
 * the adapters answer `ServiceUnavailable`. Building it fails if the database is unreachable at start.
 */
export const clientLayer = (config: Config): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  config.databaseUrl !== undefined
    ? PgClient.layer({
        url: Redacted.make(config.databaseUrl),
        connectTimeout: config.connectTimeout ?? Duration.seconds(5),
        maxConnections: config.maxConnections ?? 10,
        applicationName: "laari"
      })
    : PgliteClient.layer({ dataDir: config.dataDir })

/** Every adapter over an already migrated database. */
export const adapters: Layer.Layer<
  Store.Ports | Directory.Directory,
  never,
  SqlClient.SqlClient | Crypto.Crypto
> = Layer.merge(Store.layer, Directory.layer)

/** Migrates, then provides the SQL client, every core port, the `Directory` and `Crypto`. */
export const layer = (
  config: Config
): Layer.Layer<
  SqlClient.SqlClient | Store.Ports | Directory.Directory | Crypto.Crypto,
  SqlError | MigrationError
> => {
  const migrated = Layer.effectDiscard(Migrations.run).pipe(Layer.provideMerge(clientLayer(config)))
  return adapters.pipe(Layer.provideMerge(migrated), Layer.provideMerge(Crypto.layerWeb))
}
