/**
 * `laari migrate`: the schema's migrations applied to the configured database (PostgreSQL with a URL,
 * else PGlite in the data directory), as the service applies them at start. Composed here, with the
 * other roots (`Serve`), so the CLI loads it on use and names no SQL module.
 */
import type { MigrationError } from "@effect/sql/Migrator"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import * as Database from "./Sql/Database.js"
import * as Migrations from "./Sql/Migrations.js"

/** The migrations this build knows, by name, in the order they run. */
export const names: ReadonlyArray<string> = Object.keys(Migrations.migrations).sort()

/** Applies what the database lacks, calling `progress` as each starts; those applied. */
export const run = (
  config: { readonly databaseUrl?: string | undefined; readonly dataDir?: string | undefined },
  progress: (name: string) => Effect.Effect<void>
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, SqlError | MigrationError> =>
  Effect.provide(Migrations.runWith(progress), Database.clientLayer(config))
