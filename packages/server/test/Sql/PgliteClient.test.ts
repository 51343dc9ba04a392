import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PgliteClient from "../../src/Sql/Pglite/PgliteClient.js"

// Creating a PGlite instance takes seconds (initdb runs in WASM), so the file shares one.
// Test services are excluded so `Effect.sleep` uses the real clock in the concurrency tests.
layer(PgliteClient.layer({}), { timeout: "60 seconds", excludeTestServices: true })("PgliteClient", (it) => {
  const count = (table: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.map(sql<{ n: number }>`select count(*) as n from ${sql(table)}`, (rows) => rows[0]!.n)
    )

  it.effect("round-trips parameters of each type", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table types (
        name text, n int4, big int8, huge int8, flag boolean, at timestamptz,
        doc jsonb, bin bytea, missing text
      )`
      const at = new Date("2024-05-06T07:08:09.123Z")
      const doc = { a: [1, "two", { three: true }], b: null }
      const bin = new Uint8Array([0, 1, 127, 128, 255])
      yield* sql`insert into types values (
        ${"hello"}, ${42}, ${123n}, ${9007199254740993n}, ${true}, ${at}, ${doc}, ${bin}, ${null}
      )`
      const rows = yield* sql`select * from types where name = ${"hello"} and flag = ${true}`
      expect(rows).toHaveLength(1)
      const row = rows[0]!
      expect(row.name).toBe("hello")
      expect(row.n).toBe(42)
      // int8: a number when safe, a bigint when not.
      expect(row.big).toBe(123)
      expect(row.huge).toBe(9007199254740993n)
      expect(row.flag).toBe(true)
      expect(row.at).toBeInstanceOf(Date)
      expect((row.at as Date).toISOString()).toBe(at.toISOString())
      expect(row.doc).toEqual(doc)
      expect(row.bin).toBeInstanceOf(Uint8Array)
      expect(Array.from(row.bin as Uint8Array)).toEqual(Array.from(bin))
      expect(row.missing).toBeNull()

      const counted = yield* sql`select count(*) as n from types`
      expect(counted[0]!.n).toBe(1)
      expect(yield* sql`select now() as t`.pipe(Effect.map((r) => r[0]!.t))).toBeInstanceOf(Date)
    })
  )

  it.effect("values, raw, stream and multi-statement unsafe", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`select ${1}::int as a, ${"x"}::text as b`.values).toEqual([[1, "x"]])
      expect(yield* sql`select 2 as a`.values).toEqual([[2]])

      const raw = (yield* sql`select ${3}::int as a`.raw) as { rows: Array<unknown> }
      expect(raw.rows).toEqual([{ a: 3 }])

      const streamed = yield* sql<{ n: number }>`select generate_series(1, ${5}) as n`.stream.pipe(
        Stream.runCollect
      )
      expect(Chunk.toReadonlyArray(streamed).map((r) => r.n)).toEqual([1, 2, 3, 4, 5])

      // Several statements in one string, as migrations do.
      yield* sql.unsafe(`
        create table multi_a (id int primary key);
        create table multi_b (id int primary key);
        insert into multi_a values (1), (2);
      `)
      expect(yield* count("multi_a")).toBe(2)
      expect(yield* count("multi_b")).toBe(0)
      const unprepared = yield* sql.unsafe<{ id: number }>("select id from multi_a where id = $1", [2])
        .unprepared
      expect(unprepared).toEqual([{ id: 2 }])
    })
  )

  it.effect("sql.insert, sql.in, sql.update and identifiers compile for Postgres", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const table = "People"
      yield* sql`create table ${sql(table)} (id serial primary key, "firstName" text not null, age int)`
      const inserted = yield* sql<{ id: number }>`insert into ${sql(table)} ${sql.insert([
        { firstName: "Ada", age: 36 },
        { firstName: "Alan", age: 41 },
        { firstName: "Grace", age: 85 }
      ])} returning id`
      expect(inserted.map((r) => r.id)).toEqual([1, 2, 3])

      const some = yield* sql<{ firstName: string }>`select "firstName" from ${sql(table)}
        where ${sql.in("id", [1, 3])} order by id`
      expect(some.map((r) => r.firstName)).toEqual(["Ada", "Grace"])
      const none = yield* sql`select * from ${sql(table)} where ${sql.in("id", [])}`
      expect(none).toEqual([])

      yield* sql`update ${sql(table)} set ${sql.update({ id: 2, age: 42 }, ["id"])} where id = ${2}`
      const alan = yield* sql<{ age: number }>`select age from ${sql(table)} where id = ${2}`
      expect(alan[0]!.age).toBe(42)
    })
  )

  it.effect("withTransaction commits", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table tx_commit (id int primary key)`
      yield* Effect.gen(function* () {
        yield* sql`insert into tx_commit values (${1})`
        yield* sql`insert into tx_commit values (${2})`
        // Statements inside the transaction see its own writes (and don't deadlock).
        expect(yield* count("tx_commit")).toBe(2)
      }).pipe(sql.withTransaction)
      expect(yield* count("tx_commit")).toBe(2)
    })
  )

  it.effect("withTransaction rolls back on failure", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table tx_fail (id int primary key)`
      const error = yield* Effect.gen(function* () {
        yield* sql`insert into tx_fail values (${1})`
        return yield* Effect.fail("boom" as const)
      }).pipe(sql.withTransaction, Effect.flip)
      expect(error).toBe("boom")
      expect(yield* count("tx_fail")).toBe(0)
    })
  )

  it.effect("nested withTransaction rolls back to its savepoint only", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table tx_nested (id int primary key)`
      yield* Effect.gen(function* () {
        yield* sql`insert into tx_nested values (${1})`
        const inner = yield* Effect.gen(function* () {
          yield* sql`insert into tx_nested values (${2})`
          return yield* Effect.fail("inner" as const)
        }).pipe(sql.withTransaction, Effect.either)
        expect(inner._tag).toBe("Left")
        yield* sql`insert into tx_nested values (${3})`
      }).pipe(sql.withTransaction)
      const rows = yield* sql<{ id: number }>`select id from tx_nested order by id`
      expect(rows.map((r) => r.id)).toEqual([1, 3])
    })
  )

  it.effect("withTransaction rolls back on interruption and releases the permit", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table tx_interrupt (id int primary key)`
      const inserted = yield* Deferred.make<void>()
      const fiber = yield* Effect.gen(function* () {
        yield* sql`insert into tx_interrupt values (${1})`
        yield* Deferred.succeed(inserted, undefined)
        return yield* Effect.never
      }).pipe(sql.withTransaction, Effect.fork)
      yield* Deferred.await(inserted)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(yield* count("tx_interrupt").pipe(Effect.timeout("5 seconds"))).toBe(0)
    })
  )

  it.effect("a statement from another fiber waits for an open transaction instead of joining it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table tx_isolation (id int primary key)`
      const log = yield* Ref.make<ReadonlyArray<string>>([])
      const append = (entry: string) => Ref.update(log, (entries) => [...entries, entry])

      // Rolled back: if B ran inside A's transaction it would count 1.
      const insertedA = yield* Deferred.make<void>()
      const fiberA = yield* Effect.gen(function* () {
        yield* sql`insert into tx_isolation values (${1})`
        yield* Deferred.succeed(insertedA, undefined)
        yield* Effect.sleep("300 millis")
        yield* append("A: rollback")
        return yield* Effect.fail("rollback" as const)
      }).pipe(sql.withTransaction, Effect.fork)
      yield* Deferred.await(insertedA)
      const fiberB = yield* count("tx_isolation").pipe(Effect.tap(append("B: done")), Effect.fork)
      yield* Effect.sleep("100 millis")
      expect(Option.isNone(yield* Fiber.poll(fiberB))).toBe(true)
      expect(yield* Fiber.join(fiberB)).toBe(0)
      expect(yield* Fiber.await(fiberA).pipe(Effect.map(Exit.isFailure))).toBe(true)
      expect(yield* Ref.get(log)).toEqual(["A: rollback", "B: done"])

      // Committed: B completes only after the commit, then sees the row.
      yield* Ref.set(log, [])
      const insertedC = yield* Deferred.make<void>()
      const fiberC = yield* Effect.gen(function* () {
        yield* sql`insert into tx_isolation values (${2})`
        yield* Deferred.succeed(insertedC, undefined)
        yield* Effect.sleep("300 millis")
        yield* append("C: commit")
      }).pipe(sql.withTransaction, Effect.fork)
      yield* Deferred.await(insertedC)
      const fiberD = yield* count("tx_isolation").pipe(Effect.tap(append("D: done")), Effect.fork)
      yield* Effect.sleep("100 millis")
      expect(Option.isNone(yield* Fiber.poll(fiberD))).toBe(true)
      expect(yield* Fiber.join(fiberD)).toBe(1)
      yield* Fiber.join(fiberC)
      expect(yield* Ref.get(log)).toEqual(["C: commit", "D: done"])
    })
  )

  it.effect("unique violations surface as SqlError with the Postgres code on the cause", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table uniq (email text unique)`
      yield* sql`insert into uniq values (${"a@example.com"})`
      const error = yield* sql`insert into uniq values (${"a@example.com"})`.pipe(Effect.flip)
      expect(error).toBeInstanceOf(SqlError)
      expect((error.cause as { code?: string }).code).toBe("23505")
      // The failed statement did not leave the session in a broken state.
      expect(yield* count("uniq")).toBe(1)
    })
  )
})

// Not inside the shared layer: this test opens and closes its own instances.
describe("PgliteClient with a dataDir", () => {
  it.live(
    "persists across close and reopen, and closes PGlite with the scope",
    () =>
      Effect.gen(function* () {
        const root = yield* Effect.acquireRelease(
          Effect.promise(() => mkdtemp(join(tmpdir(), "pglite-client-"))),
          (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
        )
        // A nested path that does not exist yet.
        const dataDir = join(root, "nested", "db")

        const first = yield* Effect.gen(function* () {
          const client = yield* PgliteClient.PgliteClient
          yield* client`create table kept (id int primary key, label text)`
          yield* client`insert into kept ${client.insert({ id: 1, label: "persisted" })}`
          return client.pglite
        }).pipe(Effect.provide(PgliteClient.layer({ dataDir })))
        expect(first.closed).toBe(true)

        const rows = yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql`select * from kept`
        }).pipe(Effect.provide(PgliteClient.layer({ dataDir })))
        expect(rows).toEqual([{ id: 1, label: "persisted" }])
      }).pipe(Effect.scoped),
    // Two PGlite instances over one directory: seconds quiet, over a minute at load 25.
    180_000
  )
})
