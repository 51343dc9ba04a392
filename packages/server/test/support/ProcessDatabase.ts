/**
 * A server process's database, as its environment: a fresh PostgreSQL database with `DATABASE_URL`, else
 * PGlite in a temporary directory. The first start on an empty PGlite directory runs initdb and every
 * migration in WebAssembly (seconds of CPU, more on a busy machine); PostgreSQL does the same in well under
 * a second. Either is removed when `scope` closes.
 */
import { Effect, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import * as TestDatabase from "./TestDatabase.js"

export const env = async (scope: Scope.Scope, prefix = "laari-"): Promise<Record<string, string>> => {
  const url = TestDatabase.postgresUrl
  if (url !== undefined)
    return { DATABASE_URL: await Effect.runPromise(Scope.extend(TestDatabase.createDatabase(url), scope)) }
  const dir = mkdtempSync(Path.join(tmpdir(), prefix))
  await Effect.runPromise(
    Scope.addFinalizer(
      scope,
      Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
  )
  return { LAARI_DATA_DIR: dir }
}
