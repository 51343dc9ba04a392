/**
 * The store contract of the testkit, on PGlite and (with DATABASE_URL) on PostgreSQL: the SQL adapters
 * behave exactly as the memory adapters do.
 */
import { describe } from "@effect/vitest"
import * as StoreContract from "@laari/testkit/StoreContract"
import * as TestDatabase from "../support/TestDatabase.js"

StoreContract.suite("PGlite", () => TestDatabase.pglite())

describe.skipIf(TestDatabase.postgresUrl === undefined)("PostgreSQL", () => {
  StoreContract.suite("PostgreSQL", () => TestDatabase.postgres(TestDatabase.postgresUrl!))
})
