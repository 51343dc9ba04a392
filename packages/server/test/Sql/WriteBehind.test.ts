/**
 * Write-behind (`Sql/WriteBehind`) and the per-process row cache (`Sql/RowCache`), on PGlite and (with
 * DATABASE_URL) PostgreSQL: held writes are exactly equivalent to running each in turn, and a cached
 * key or merchant never outlives its change.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import { ApiKeys, Money, Store, Wallet } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Context, Effect, Either, Exit, Layer, Option } from "effect"
import * as Database from "../../src/Sql/Database.js"
import * as WriteBehind from "../../src/Sql/WriteBehind.js"
import * as TestDatabase from "../support/TestDatabase.js"

/** A scratch table and a counter of the statements the client sends. */
const setup = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS wb_rows (id text PRIMARY KEY, n integer NOT NULL CHECK (n < 100))`
  yield* sql`TRUNCATE wb_rows`
  return sql
})

const held = (sql: SqlClient.SqlClient, id: string, n: number) =>
  WriteBehind.hold(sql, [`wb:${id}`], () => [
    { alias: "i", statement: sql`INSERT INTO wb_rows (id, n) VALUES (${id}, ${n})` }
  ])

const bump = (sql: SqlClient.SqlClient, id: string) =>
  WriteBehind.hold(sql, [`wb:${id}`], () => [
    { alias: "u", statement: sql`UPDATE wb_rows SET n = n + 1 WHERE id = ${id}` }
  ])

const rows = (sql: SqlClient.SqlClient) =>
  sql<{ id: string; n: number }>`SELECT id, n FROM wb_rows ORDER BY id`.pipe(
    Effect.map((r) => r.map((x) => [x.id, Number(x.n)]))
  )

/** A merchant and a secret key of it, with the key's hash. */
const merchantWithKey = (name: string) =>
  Effect.gen(function* () {
    const merchant = yield* Effect.flatMap(Seed.Seed, (seed) => seed.merchant({ name }))
    const keys = yield* ApiKeys.ApiKeys
    const issued = yield* keys.issue({ merchantId: merchant.id, environment: "test", kind: "secret" })
    const hash = yield* keys.digest(issued.key)
    return { merchant, issued, hash }
  })

TestDatabase.eachBackend("write-behind", (it) => {
  it.effect("a held write is seen by the next statement of its transaction and committed with it", () =>
    Effect.gen(function* () {
      const sql = yield* setup
      const seen = yield* WriteBehind.transaction(sql)(
        Effect.gen(function* () {
          yield* held(sql, "a", 1)
          yield* held(sql, "b", 2)
          return yield* rows(sql)
        })
      )
      expect(seen).toEqual([
        ["a", 1],
        ["b", 2]
      ])
      expect(yield* rows(sql)).toEqual(seen)
    })
  )

  it.effect("rows held into sets are written in one statement, in the order held, with exact values", () =>
    Effect.gen(function* () {
      const sql = yield* setup
      yield* sql`CREATE TABLE IF NOT EXISTS wb_set (position bigint GENERATED ALWAYS AS IDENTITY,
            id text PRIMARY KEY, n bigint NOT NULL CHECK (n <> 100), at timestamptz NOT NULL, data jsonb)`
      yield* sql`TRUNCATE wb_set`
      const set = WriteBehind.insertInto("wb_set_inserted", "wb_set", ["id", "n", "at", "data"])
      const bumped = WriteBehind.updateOf("wb_set_updated", "wb_set", ["id", "n"], ["id"], ["id"])
      const at = new Date("2031-01-31T05:00:00.123Z")
      const ids = ["m", "c", "x", "a"]
      const statements = yield* WriteBehind.transaction(sql)(
        Effect.gen(function* () {
          for (const [i, id] of ids.entries())
            yield* WriteBehind.holdRows(
              sql,
              [`wb_set:${id}`],
              [[set, { id, n: 2 ** 40 + i, at, data: { id, quote: `"${id}'` } }]]
            )
          // A second write of one row goes into the next flush: the sets never change a row twice.
          yield* WriteBehind.holdRows(sql, ["wb_set:c"], [[bumped, { id: "c", n: 7 }]])
          yield* WriteBehind.holdRows(sql, ["wb_set:a"], [[bumped, { id: "a", n: 8 }]])
          return yield* sql<{ id: string; n: string; at: Date; data: unknown }>`
                SELECT id, n::text AS n, at, data FROM wb_set ORDER BY position`
        })
      )
      expect(statements.map((r) => r.id)).toEqual(ids)
      expect(statements.map((r) => r.n)).toEqual([String(2 ** 40), "7", String(2 ** 40 + 2), "8"])
      expect(statements.every((r) => r.at.getTime() === at.getTime())).toBe(true)
      expect(statements[2]!.data).toEqual({ id: "x", quote: `"x'` })
      // A constraint a set breaks fails the transaction, and nothing of it is written.
      const broken = yield* WriteBehind.transaction(sql)(
        WriteBehind.holdRows(sql, ["wb_set:z"], [[set, { id: "z", n: 100, at, data: null }]])
      ).pipe(Effect.exit)
      expect(Exit.isFailure(broken)).toBe(true)
      expect((yield* sql`SELECT id FROM wb_set WHERE id = 'z'`).length).toBe(0)
    })
  )

  it.effect("writes to one row are sent one after the other: none is lost", () =>
    Effect.gen(function* () {
      const sql = yield* setup
      yield* WriteBehind.transaction(sql)(
        Effect.gen(function* () {
          yield* held(sql, "a", 1)
          yield* bump(sql, "a")
          yield* bump(sql, "a")
          yield* held(sql, "b", 10)
          yield* bump(sql, "b")
        })
      )
      expect(yield* rows(sql)).toEqual([
        ["a", 3],
        ["b", 11]
      ])
    })
  )

  it.effect("a held write that breaks a constraint fails the transaction, and nothing is kept", () =>
    Effect.gen(function* () {
      const sql = yield* setup
      const exit = yield* Effect.exit(
        WriteBehind.transaction(sql)(
          Effect.gen(function* () {
            yield* held(sql, "a", 1)
            yield* held(sql, "b", 100)
          })
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* rows(sql)).toEqual([])
    })
  )

  it.effect(
    "held writes of a failed command are dropped with its rollback; outside one they run at once",
    () =>
      Effect.gen(function* () {
        const sql = yield* setup
        const exit = yield* Effect.exit(
          WriteBehind.transaction(sql)(Effect.zipRight(held(sql, "a", 1), Effect.fail("refused")))
        )
        expect(exit).toEqual(Exit.fail("refused"))
        expect(yield* rows(sql)).toEqual([])
        yield* held(sql, "c", 5)
        expect(yield* rows(sql)).toEqual([["c", 5]])
      })
  )

  it.effect("the Transactor holds a command's writes: the charge path's writes land together", () =>
    Effect.gen(function* () {
      const sql = yield* setup
      const tx = yield* Store.Transactor
      const during = yield* tx.withTransaction(
        Effect.gen(function* () {
          yield* held(sql, "a", 1)
          const pending = yield* Effect.serviceOption(WriteBehind.Pending)
          return pending._tag === "Some" ? pending.value.parts.length : -1
        })
      )
      expect(during).toBe(1)
      expect(yield* rows(sql)).toEqual([["a", 1]])
    })
  )

  it.effect("a part that fails is undone alone, its writes held or sent; a part that succeeds stays", () =>
    Effect.gen(function* () {
      const sql = yield* setup
      const tx = yield* Store.Transactor
      /** Writes `a`, parts writing `b` (held) and `c` (sent) that fail, and `d` in a part that stays. */
      const parts = Effect.gen(function* () {
        // Provided by the transaction, so not a requirement of the test's.
        const savepoints = Option.getOrThrow(yield* Effect.serviceOption(WriteBehind.Savepoints))
        yield* held(sql, "a", 1)
        yield* Effect.either(savepoints.run(Effect.zipRight(held(sql, "b", 2), Effect.fail("no"))))
        const sent = Effect.zipRight(held(sql, "c", 3), Effect.zipRight(rows(sql), Effect.fail("no")))
        yield* Effect.either(savepoints.run(sent))
        yield* savepoints.run(held(sql, "d", 4))
        return yield* rows(sql)
      })
      // The Transactor's transaction (batched on PostgreSQL and PGlite), and write-behind's plain one.
      expect(yield* tx.withTransaction(parts)).toEqual([
        ["a", 1],
        ["d", 4]
      ])
      expect(yield* rows(sql)).toEqual([
        ["a", 1],
        ["d", 4]
      ])
      yield* sql`TRUNCATE wb_rows`
      yield* WriteBehind.transaction(sql)(parts)
      expect(yield* rows(sql)).toEqual([
        ["a", 1],
        ["d", 4]
      ])
      // inParts: each transaction opened is a part; one nested in it joins it.
      yield* sql`TRUNCATE wb_rows`
      yield* tx.withTransaction(
        tx.inParts(
          Effect.gen(function* () {
            yield* Effect.either(tx.withTransaction(Effect.zipRight(held(sql, "e", 5), Effect.fail("no"))))
            yield* tx.withTransaction(
              Effect.zipRight(held(sql, "f", 6), Effect.either(tx.withTransaction(Effect.fail("no"))))
            )
          })
        )
      )
      expect(yield* rows(sql)).toEqual([["f", 6]])
    })
  )
})

TestDatabase.eachBackend("locked rows", (it) => {
  it.effect(
    "a payer read in a command is locked and reused by its transfer until the transfer writes it",
    () =>
      Effect.gen(function* () {
        const seed = yield* Seed.Seed
        const tx = yield* Store.Transactor
        const wallet = yield* Wallet.Wallet
        const merchant = yield* seed.merchant({ name: "Locked" })
        const customer = yield* seed.customer({
          environment: "test",
          phone: `+960 locked-${merchant.id}`,
          balance: 10_000
        })
        const transfer = (id: string) =>
          wallet
            .transfer({
              id: `locked:${id}:${merchant.id}`,
              environment: "test",
              payer: customer.id,
              merchant: merchant.id,
              amount: Money.Laari(6_000),
              fee: Money.Laari(60),
              memo: "locked"
            })
            .pipe(Effect.either)
        const [first, second] = yield* tx.withTransaction(
          Effect.gen(function* () {
            expect((yield* wallet.payer(customer.id))?.balance).toBe(10_000)
            return [yield* transfer("a"), yield* transfer("b")] as const
          })
        )
        expect(first._tag).toBe("Right")
        // The second sees the first's debit, not the balance read before it.
        expect(second).toEqual(Either.left(new Wallet.TransferRefused({ reason: "insufficient-balance" })))
        expect((yield* wallet.payer(customer.id))?.balance).toBe(4_000)
      })
  )
})

TestDatabase.eachBackend("row cache", (it) => {
  it.effect("a key revoked or a merchant changed is never served from the cache afterwards", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys.ApiKeys
      const stored = yield* Store.ApiKeysStore
      const merchants = yield* Store.MerchantsStore
      const { merchant, issued, hash } = yield* merchantWithKey("Cached")
      expect((yield* stored.findByHash(hash))?.revokedAt).toBeNull()
      expect((yield* merchants.get(merchant.id))?.features.mandatesLive).toBe(false)
      expect(yield* keys.revoke(merchant.id, issued.id)).toBe(true)
      expect((yield* stored.findByHash(hash))?.revokedAt).not.toBeNull()
      yield* (yield* Store.MerchantRegistryStore).setFeatures(merchant.id, { mandatesLive: true })
      expect((yield* merchants.get(merchant.id))?.features.mandatesLive).toBe(true)
    })
  )
})

describe.skipIf(TestDatabase.postgresUrl === undefined)("row cache across processes (PostgreSQL)", () => {
  // Two adapter stacks on one database, as two server processes have: a change made through one is
  // seen by the other once the notification arrives.
  layer(TestDatabase.postgres(TestDatabase.postgresUrl!), {
    excludeTestServices: true,
    timeout: "60 seconds"
  })("two processes", (it) => {
    it.effect("a key revoked in one is refused by the other within moments", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ name: string }>`SELECT current_database() AS name`
        const otherUrl = TestDatabase.withDatabase(TestDatabase.postgresUrl!, row!.name)
        const keys = yield* ApiKeys.ApiKeys
        const { merchant, issued, hash } = yield* merchantWithKey("Two processes")
        yield* Effect.scoped(
          Effect.gen(function* () {
            const other = yield* Layer.build(Database.layer({ databaseUrl: otherUrl }))
            const otherKeys = Context.get(other, Store.ApiKeysStore)
            expect((yield* otherKeys.findByHash(hash))?.revokedAt).toBeNull()
            yield* keys.revoke(merchant.id, issued.id)
            // The other process drops its entry when the notification comes: poll, bounded.
            let revoked = false
            for (let i = 0; i < 50 && !revoked; i++) {
              revoked = (yield* otherKeys.findByHash(hash))?.revokedAt !== null
              if (!revoked) yield* Effect.sleep("20 millis")
            }
            expect(revoked).toBe(true)
          })
        )
      })
    )
  })
})
