/**
 * API keys are stored as keyed hashes (HMAC-SHA-256 under a server secret in `server_secrets`), never as
 * a plain hash of the key; a key stored the old way (plain SHA-256) still authenticates, and is hashed
 * keyed from its first use on. On PGlite always, on PostgreSQL with DATABASE_URL.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect } from "@effect/vitest"
import { ApiKey, ApiKeys, Auth, Store } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Context, DateTime, Effect, Layer } from "effect"
import { createHmac, randomBytes } from "node:crypto"
import { credentials, principalOf } from "../../src/Http/Security.js"
import * as Keys from "../../src/Platform/Keys.js"
import * as Database from "../../src/Sql/Database.js"
import * as TestDatabase from "../support/TestDatabase.js"

/** A well-formed secret test key that was never issued. */
const unissuedKey = () => `${Auth.keyPrefix("secret", "test")}${randomBytes(24).toString("hex")}`

const storedHash = (keyId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly key_hash: string }>`SELECT key_hash FROM api_keys WHERE id = ${keyId}`,
      (rows) => rows[0]?.key_hash
    )
  )

TestDatabase.eachBackend("keyed key hashes", (it, backend) => {
  it.effect("a new key is stored keyed, not as its plain hash, and authenticates", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys.ApiKeys
      const merchant = yield* Effect.flatMap(Seed.Seed, (s) => s.merchant({ name: "Keyed" }))
      const issued = yield* keys.issue({
        merchantId: merchant.id,
        environment: "test",
        kind: "secret"
      })
      const stored = yield* storedHash(issued.id)
      expect(stored).toMatch(/^h1:[0-9a-f]{64}$/)
      expect(stored).not.toContain(Keys.hash(issued.key))
      expect(stored).toBe(yield* keys.digest(issued.key))
      expect((yield* principalOf(yield* credentials, issued.key))?.keyId).toBe(issued.id)
      // The secret is the database's: without it the stored hash says nothing about the key.
      expect(stored).not.toBe(
        ApiKey.keyedDigest(createHmac("sha256", new Uint8Array(32)).update(issued.key).digest("hex"))
      )
      expect(
        yield* principalOf(
          yield* credentials,
          `${issued.key.slice(0, -1)}${issued.key.endsWith("0") ? "1" : "0"}`
        )
      ).toBeUndefined()
    })
  )

  it.effect("a key stored as a plain hash authenticates once the old way, then is hashed keyed", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys.ApiKeys
      const merchant = yield* Effect.flatMap(Seed.Seed, (s) => s.merchant({ name: "Legacy" }))
      const key = unissuedKey()
      const id = crypto.randomUUID()
      yield* (yield* Store.ApiKeysStore).insert(
        {
          id,
          merchantId: merchant.id,
          environment: "test",
          kind: "secret",
          scopes: ["qr:write"],
          keyHash: Keys.hash(key),
          keyPrefix: ApiKey.displayPrefix(key)
        },
        DateTime.unsafeNow()
      )
      expect((yield* principalOf(yield* credentials, key))?.keyId).toBe(id)
      expect(yield* storedHash(id)).toBe(yield* keys.digest(key))
      expect((yield* principalOf(yield* credentials, key))?.scopes).toEqual(["qr:write"])
      // A plain hash that is not the key's finds nothing.
      expect(yield* principalOf(yield* credentials, unissuedKey())).toBeUndefined()
    })
  )

  it.effect("every process hashes under the same secret", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys.ApiKeys
      const sql = yield* SqlClient.SqlClient
      if (backend.name === "PGlite" || TestDatabase.postgresUrl === undefined) {
        // One PGlite, one process: the secret read again after it was made is the same.
        const [row] = yield* sql<{
          n: number
        }>`SELECT count(*)::int AS n FROM server_secrets WHERE name = 'api_key_hashes'`
        expect(row?.n).toBe(1)
        return
      }
      const [row] = yield* sql<{ name: string }>`SELECT current_database() AS name`
      const otherUrl = TestDatabase.withDatabase(TestDatabase.postgresUrl, row!.name)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const other = Context.get(
            yield* Layer.build(Database.layer({ databaseUrl: otherUrl })),
            ApiKeys.ApiKeys
          )
          expect(yield* other.digest("sk_test_same")).toBe(yield* keys.digest("sk_test_same"))
        })
      )
    })
  )
})
