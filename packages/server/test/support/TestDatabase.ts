/**
 * Databases for the SQL tests.
 *
 * - `pglite()`: in-memory PGlite with the schema, every adapter (the delivery log's too) and `Seed`. Creating one takes seconds,
 *   so a test file shares one (`layer(pglite())(...)` of @effect/vitest) and, where a test needs a clean
 *   slate, calls `reset`.
 * - `postgres(url)`: a fresh database `laari_test_<random>` on the server at `url`, dropped when the
 *   layer is released. PostgreSQL suites run only when `DATABASE_URL` is set; otherwise they are skipped
 *   with a warning (`describe.skipIf(postgresUrl === undefined)`).
 * - `eachBackend(title, body)`: a suite run on PGlite and on PostgreSQL, a database each.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import type { MigrationError } from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { describe, layer, type Vitest } from "@effect/vitest"
import {
  type ApiKeys,
  Audit,
  type Crypto,
  type DeliveriesStore,
  type NoticeOutbox,
  type OAuthClients,
  type WallClock
} from "@laari/core"
import type { Seed } from "@laari/testkit"
import { Effect, Layer, Redacted, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import * as Database from "../../src/Sql/Database.js"
import type { Directory } from "../../src/Platform/Directory.js"
import type { Ports } from "../../src/Sql/Store.js"
import * as SystemWallClock from "../../src/Platform/WallClock.js"
import * as WebhookDeliveries from "../../src/Sql/WebhookDeliveries.js"
import * as SqlSeed from "./SqlSeed.js"

/** The PostgreSQL server the PostgreSQL suites use; `undefined` skips them. */
export const postgresUrl: string | undefined = process.env.DATABASE_URL || undefined

if (postgresUrl === undefined) console.warn("DATABASE_URL is not set: skipping PostgreSQL suites")

export type TestServices =
  | SqlClient.SqlClient
  | Ports
  | DeliveriesStore.DeliveriesStore
  | NoticeOutbox.NoticeOutbox
  | Directory
  | OAuthClients.OAuthClients
  | ApiKeys.ApiKeys
  | Crypto.Crypto
  | WallClock.WallClock
  | Audit.Audit
  | Seed.Seed

/**
 * The database with `Seed`, the delivery log (`Sql/WebhookDeliveries`), which the server keeps beside it,
 * the system's wall time, the one port of core no database brings, and the audit log over them (which
 * every service that changes something notes in).
 */
const withSeed = (
  database: Layer.Layer<
    Exclude<TestServices, Seed.Seed | DeliveriesStore.DeliveriesStore | WallClock.WallClock | Audit.Audit>,
    SqlError | MigrationError
  >
) =>
  Layer.merge(SqlSeed.layer, Audit.Audit.Default).pipe(
    Layer.provideMerge(WebhookDeliveries.deliveriesLayer),
    Layer.provideMerge(Layer.merge(database, SystemWallClock.layer))
  )

/** An in-memory PGlite database, migrated, with every adapter and `Seed`. */
export const pglite = (): Layer.Layer<TestServices, SqlError | MigrationError> => withSeed(Database.layer({}))

/** `url` with its database name replaced. */
export const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** Runs `f` on a short-lived connection to the server's maintenance database. */
const onServer = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, SqlError>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
  )

/** A fresh, empty database on the PostgreSQL server at `url`, dropped when the scope closes; its URL. */
export const createDatabase = (url: string): Effect.Effect<string, SqlError, Scope.Scope> =>
  Effect.gen(function* () {
    const name = `laari_test_${randomBytes(6).toString("hex")}`
    yield* Effect.acquireRelease(
      onServer(url, (sql) => sql`CREATE DATABASE ${sql(name)}`),
      () => onServer(url, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).pipe(Effect.orDie)
    )
    return withDatabase(url, name)
  })

/**
 * A fresh database on the PostgreSQL server at `url`, migrated, with every adapter and `Seed`; dropped
 * afterwards. `config` overrides the database layer's settings (the URL aside).
 */
export const postgres = (
  url: string,
  config: Omit<Database.Config, "databaseUrl"> = {}
): Layer.Layer<TestServices, SqlError | MigrationError> =>
  Layer.unwrapScoped(
    Effect.map(createDatabase(url), (databaseUrl) => withSeed(Database.layer({ ...config, databaseUrl })))
  )

/** The backends a suite runs on; PostgreSQL is skipped without `DATABASE_URL`. */
export const backends: ReadonlyArray<{
  readonly name: "PGlite" | "PostgreSQL"
  readonly skip: boolean
  readonly layer: () => Layer.Layer<TestServices, SqlError | MigrationError>
}> = [
  { name: "PGlite", skip: false, layer: pglite },
  { name: "PostgreSQL", skip: postgresUrl === undefined, layer: () => postgres(postgresUrl!) }
]

/** One of `backends`. */
export type Backend = (typeof backends)[number]

/**
 * The tests `body` declares, once on each backend: a suite `<backend> > title` on a database of its own,
 * shared by its tests (without the test services: the clock is real). PostgreSQL's is skipped without
 * `DATABASE_URL`.
 */
export const eachBackend = (
  title: string,
  body: (it: Vitest.MethodsNonLive<TestServices, true>, backend: Backend) => void
): void => {
  for (const backend of backends)
    describe.skipIf(backend.skip)(backend.name, () => {
      layer(backend.layer(), { excludeTestServices: true, timeout: "60 seconds" })(title, (it) =>
        body(it, backend)
      )
    })
}

/**
 * Empties every table (the schema stays), for tests that need a clean slate. The audit log refuses
 * TRUNCATE (its triggers): they are off for this one transaction, which the tests' superuser may do.
 */
export const reset: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ readonly name: string }>`SELECT tablename AS name FROM pg_tables
    WHERE schemaname = 'public' AND tablename <> 'effect_sql_migrations'`
  if (tables.length === 0) return
  const audited = tables.some((t) => t.name === "audit_events")
  yield* sql.withTransaction(
    Effect.gen(function* () {
      if (audited) yield* sql`ALTER TABLE audit_events DISABLE TRIGGER USER`
      yield* sql.unsafe(`TRUNCATE ${tables.map((t) => `"${t.name}"`).join(", ")} RESTART IDENTITY CASCADE`)
      if (audited) yield* sql`ALTER TABLE audit_events ENABLE TRIGGER USER`
    })
  )
})
