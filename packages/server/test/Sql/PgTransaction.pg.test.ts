/**
 * The Transactor's batched transactions on PostgreSQL (`Sql/PgTransaction`, `Sql/Pg/PgBatch`):
 * BEGIN rides with the first statement, the last writes with COMMIT, and each batch is one round trip,
 * with exactly the outcome of sending its statements one by one. Counted at the pg client: one
 * `query` call is one round trip. PostgreSQL only (DATABASE_URL); skipped, loudly, without it.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Exit, Option, Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as PgPool from "../../src/Sql/Pg/PgPool.js"
import * as PgTransaction from "../../src/Sql/PgTransaction.js"
import * as WriteBehind from "../../src/Sql/WriteBehind.js"
import * as TestDatabase from "../support/TestDatabase.js"

if (TestDatabase.postgresUrl === undefined)
  console.warn("PgTransaction.pg.test: SKIPPED (DATABASE_URL is not set)")

/** What one `query` call sent: a batch's statements, or a single statement's text. */
const described = (query: unknown): ReadonlyArray<string> => {
  const q = query as {
    readonly statements?: ReadonlyArray<{ readonly text: string }>
    readonly text?: string
  }
  const texts =
    typeof query === "string"
      ? [query]
      : q.statements !== undefined
        ? q.statements.map((s) => s.text)
        : [q.text ?? ""]
  return texts.map((t) => t.replace(/\s+/g, " ").trim().split(" ").slice(0, 2).join(" "))
}

describe.skipIf(TestDatabase.postgresUrl === undefined)(
  "batched transactions (PostgreSQL)",
  { timeout: 60_000 },
  () => {
    const scope = Effect.runSync(Scope.make())
    let pool: pg.Pool
    /** Round trips of the transaction's connections, each as the statements it carried. */
    const trips: Array<ReadonlyArray<string>> = []
    let run: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<Exit.Exit<A, E | SqlError>>
    let transaction: PgTransaction.Transactions["transaction"]

    beforeAll(async () => {
      const url = await Effect.runPromise(
        Scope.extend(TestDatabase.createDatabase(TestDatabase.postgresUrl!), scope)
      )
      pool = new pg.Pool({ connectionString: url, max: 4 })
      // An idle client whose backend another suite's fault ends (a terminate of every session) emits its
      // error on the pool; with no listener node-postgres throws it, and vitest counts it against the run.
      pool.on("error", () => {})
      pool.on("connect", (client) => {
        const query = client.query.bind(client) as (...args: Array<unknown>) => unknown
        ;(client as unknown as { query: (...args: Array<unknown>) => unknown }).query = (...args) => {
          trips.push(described(args[0]))
          return query(...args)
        }
      })
      const layer = PgClient.layerFromPool({ acquire: Effect.succeed(pool) })
      transaction = PgTransaction.over(PgPool.sessions(pool)).transaction
      run = (effect) => Effect.runPromiseExit(Effect.provide(effect, layer))
      await run(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`CREATE TABLE pt_rows (id text PRIMARY KEY, n integer NOT NULL CHECK (n < 100))`
        )
      )
    })

    afterAll(async () => {
      await pool?.end()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    })

    const held = (sql: SqlClient.SqlClient, id: string, n: number) =>
      WriteBehind.hold(sql, [`pt:${id}`], () => [
        { alias: "i", statement: sql`INSERT INTO pt_rows (id, n) VALUES (${id}, ${n})` }
      ])
    const count = (sql: SqlClient.SqlClient, id: string) =>
      Effect.map(sql<{ n: string }>`SELECT count(*)::text AS n FROM pt_rows WHERE id = ${id}`, (r) =>
        Number(r[0]!.n)
      )
    /** The statements of `effect`'s transaction, by round trip. */
    const tripsOf = async <A, E>(
      effect: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, SqlClient.SqlClient>
    ) => {
      trips.length = 0
      const exit = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => transaction(effect(sql))))
      return { exit, trips: [...trips] }
    }

    it("a read, then writes held to the end: two round trips, BEGIN with the read, the writes with COMMIT", async () => {
      const { exit, trips } = await tripsOf((sql) =>
        Effect.gen(function* () {
          yield* held(sql, "a", 1)
          const seen = yield* count(sql, "a")
          yield* held(sql, "b", 2)
          yield* held(sql, "c", 3)
          return seen
        })
      )
      // The held write went with the read, after BEGIN, and the read saw it.
      expect(exit).toEqual(Exit.succeed(1))
      expect(trips).toEqual([
        ["BEGIN", "WITH w0_i", "SELECT count(*)::text"],
        ["WITH w1_i", "COMMIT"]
      ])
      const after = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => count(sql, "c")))
      expect(after).toEqual(Exit.succeed(1))
    })

    it("a transaction that sends nothing costs nothing, committed or failed", async () => {
      expect((await tripsOf(() => Effect.succeed(1))).trips).toEqual([])
      const failed = await tripsOf((sql) =>
        Effect.zipRight(held(sql, "never", 1), Effect.fail("refused" as const))
      )
      expect(failed.exit).toEqual(Exit.fail("refused"))
      expect(failed.trips).toEqual([])
      expect(await run(Effect.flatMap(SqlClient.SqlClient, (sql) => count(sql, "never")))).toEqual(
        Exit.succeed(0)
      )
    })

    it("a write that fails with COMMIT: a failure (not a defect), rolled back, nothing kept", async () => {
      const { exit, trips } = await tripsOf((sql) =>
        Effect.gen(function* () {
          yield* count(sql, "d")
          yield* held(sql, "d", 1)
          yield* held(sql, "e", 100) // breaks the CHECK
        })
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const failure = Cause.failureOption(exit.cause)
        expect(Option.isSome(failure) && failure.value instanceof SqlError).toBe(true)
      }
      expect(trips).toEqual([["BEGIN", "SELECT count(*)::text"], ["WITH w0_i", "COMMIT"], ["ROLLBACK"]])
      expect(await run(Effect.flatMap(SqlClient.SqlClient, (sql) => count(sql, "d")))).toEqual(
        Exit.succeed(0)
      )
    })

    it("a failure after a statement rolls back what the batches wrote", async () => {
      const { exit, trips } = await tripsOf((sql) =>
        Effect.gen(function* () {
          yield* held(sql, "f", 1)
          yield* count(sql, "f")
          return yield* Effect.fail("refused" as const)
        })
      )
      expect(exit).toEqual(Exit.fail("refused"))
      expect(trips).toEqual([["BEGIN", "WITH w0_i", "SELECT count(*)::text"], ["ROLLBACK"]])
      expect(await run(Effect.flatMap(SqlClient.SqlClient, (sql) => count(sql, "f")))).toEqual(
        Exit.succeed(0)
      )
    })

    it("a statement that fails stops its batch: nothing after it runs", async () => {
      const { exit, trips } = await tripsOf((sql) =>
        Effect.gen(function* () {
          yield* held(sql, "g", 100) // breaks the CHECK, in the batch before the read
          return yield* count(sql, "g")
        })
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(trips).toEqual([["BEGIN", "WITH w0_i", "SELECT count(*)::text"], ["ROLLBACK"]])
    })

    /** The exit's typed failure: a `SqlError` for the connection lost with `code` (not a defect). */
    const lostWith = (exit: Exit.Exit<unknown, unknown>, code: string) => {
      const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
      expect(Option.isSome(failure) && failure.value instanceof SqlError).toBe(true)
      const cause = Option.isSome(failure) ? (failure.value as SqlError).cause : undefined
      expect((cause as { readonly code?: string } | undefined)?.code ?? "none").toBe(code)
    }

    it("a connection killed under a statement: a failure, no ROLLBACK sent on it, the client discarded", async () => {
      const { exit, trips } = await tripsOf((sql) => sql`SELECT pg_terminate_backend(pg_backend_pid())`)
      lostWith(exit, "57P01")
      expect(trips).toEqual([["BEGIN", "SELECT pg_terminate_backend(pg_backend_pid())"]])
      // The pool lends a working connection next.
      expect(await run(Effect.flatMap(SqlClient.SqlClient, (sql) => count(sql, "a")))).toEqual(
        Exit.succeed(1)
      )
    })

    it("a connection lost between statements: COMMIT is not sent, a failure, nothing kept", async () => {
      const { exit, trips } = await tripsOf((sql) =>
        Effect.gen(function* () {
          yield* held(sql, "h", 1)
          const [row] = yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
          // Another connection ends this one while no statement runs on it: pg emits the FATAL.
          yield* Effect.promise(() => pool.query("SELECT pg_terminate_backend($1)", [row!.pid]))
          yield* Effect.sleep("500 millis")
          yield* held(sql, "i", 1)
        })
      )
      lostWith(exit, "57P01")
      expect(trips.filter((t) => !t[0]!.startsWith("SELECT pg_terminate_backend"))).toEqual([
        ["BEGIN", "WITH w0_i", "SELECT pg_backend_pid()"]
      ])
      for (const id of ["h", "i"])
        expect(await run(Effect.flatMap(SqlClient.SqlClient, (sql) => count(sql, id)))).toEqual(
          Exit.succeed(0)
        )
    })

    /** The texts the transaction's connection holds as named prepared statements (`PgPrepared`). */
    const preparedTexts = (sql: SqlClient.SqlClient) =>
      Effect.map(
        sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE name LIKE 'laari\_%'`,
        (rows) => rows.map((r) => r.statement)
      )

    it("a text sent again is prepared once per connection, by name, and still answers each time", async () => {
      const { exit } = await tripsOf((sql) =>
        Effect.gen(function* () {
          const tag = `prepared-${Date.now()}`
          const seen: Array<number> = []
          // The first use goes unnamed, the second parses it by name, the third binds that name.
          for (let i = 0; i < 4; i++) {
            yield* held(sql, `${tag}-${i}`, i)
            seen.push(yield* count(sql, `${tag}-${i}`))
          }
          return { seen, texts: yield* preparedTexts(sql) }
        })
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      if (Exit.isSuccess(exit)) {
        expect(exit.value.seen).toEqual([1, 1, 1, 1])
        const reads = exit.value.texts.filter((t) => t.startsWith("SELECT count(*)::text AS n FROM pt_rows"))
        expect(reads).toHaveLength(1)
      }
    })

    it("a named statement whose first use fails is prepared anew, never bound half-made", async () => {
      // Each held write is its own statement text, seen here first, then failing on its first named use
      // (after its Parse went through), then succeeding: the name of the failed use is not used again.
      const insert = (sql: SqlClient.SqlClient, id: string, n: number) =>
        Effect.asVoid(sql`INSERT INTO pt_rows (id, n) VALUES (${id}, ${n}) ON CONFLICT (id) DO NOTHING`)
      const tag = `retry-${Date.now()}`
      expect((await tripsOf((sql) => insert(sql, `${tag}-a`, 1))).exit).toEqual(Exit.void)
      const failed = await tripsOf((sql) => insert(sql, `${tag}-b`, 500))
      expect(Exit.isFailure(failed.exit)).toBe(true)
      for (const id of ["c", "d", "e"])
        expect((await tripsOf((sql) => insert(sql, `${tag}-${id}`, 2))).exit).toEqual(Exit.void)
      const kept = await run(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.map(
            sql<{ n: string }>`SELECT count(*)::text AS n FROM pt_rows WHERE id LIKE ${`${tag}-%`}`,
            (r) => Number(r[0]!.n)
          )
        )
      )
      expect(kept).toEqual(Exit.succeed(4))
    })

    it("a table changed under its named statements (a migration while serving): run again once, answered", async () => {
      await run(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`CREATE TABLE pt_migrated (id text PRIMARY KEY, n integer NOT NULL)`
        )
      )
      const readAndWrite = (id: string) =>
        tripsOf((sql) =>
          Effect.gen(function* () {
            const rows = yield* sql<{ id: string }>`SELECT * FROM pt_migrated WHERE id = ${id} FOR UPDATE`
            yield* sql`INSERT INTO pt_migrated (id, n) VALUES (${id}, 1)`
            return rows.length
          })
        )
      // Enough uses that every connection of the pool holds the read by name.
      for (let i = 0; i < 12; i++) expect((await readAndWrite(`before-${i}`)).exit).toEqual(Exit.succeed(0))
      const texts = await run(Effect.flatMap(SqlClient.SqlClient, preparedTexts))
      expect(Exit.isSuccess(texts) && texts.value.some((t) => t.includes("FROM pt_migrated"))).toBe(true)
      // Transaction control is never named.
      expect(Exit.isSuccess(texts) && texts.value.some((t) => /^(BEGIN|COMMIT|ROLLBACK)$/.test(t))).toBe(
        false
      )
      await run(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE pt_migrated ADD COLUMN note text`)
      )
      // Each connection's named read now has another result type (0A000): every one is answered anyway.
      const after = await Promise.all(Array.from({ length: 8 }, (_, i) => readAndWrite(`after-${i}`)))
      for (const { exit } of after) expect(exit).toEqual(Exit.succeed(0))
      const kept = await run(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.map(sql<{ n: string }>`SELECT count(*)::text AS n FROM pt_migrated`, (r) => Number(r[0]!.n))
        )
      )
      expect(kept).toEqual(Exit.succeed(20))
    })

    it("values go as pg sends them (dates, JSON, NULL), and rows come back typed", async () => {
      const at = new Date("2031-01-31T05:00:00.123Z")
      const { exit, trips } = await tripsOf(
        (sql) =>
          sql<{ at: Date; data: unknown; none: null; big: string }>`SELECT
        ${at}::timestamptz AS at, ${JSON.stringify({ q: `"'` })}::jsonb AS data,
        ${null}::text AS none, (2^40)::bigint AS big`
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      if (Exit.isSuccess(exit)) {
        const row = exit.value[0]!
        expect(row.at.getTime()).toBe(at.getTime())
        expect(row.data).toEqual({ q: `"'` })
        expect(row.none).toBeNull()
        expect(row.big).toBe(String(2 ** 40))
      }
      expect(trips).toEqual([["BEGIN", "SELECT $1::timestamptz"], ["COMMIT"]])
    })

    describe("a statement announced ahead (WriteBehind.Ahead)", () => {
      const lock = (sql: SqlClient.SqlClient, id: string) =>
        sql<{ id: string; n: number }>`SELECT id, n FROM pt_rows WHERE id = ${id} FOR UPDATE`
      const claim = (sql: SqlClient.SqlClient, id: string) =>
        sql`INSERT INTO pt_rows (id, n) VALUES (${id}, 0) ON CONFLICT DO NOTHING RETURNING id`

      it("goes with the next statement, and answers the one after it: a keyed charge's claim and lock in one round trip", async () => {
        await run(Effect.flatMap(SqlClient.SqlClient, (sql) => held(sql, "ahead-1", 7)))
        const { exit, trips } = await tripsOf((sql) =>
          Effect.gen(function* () {
            yield* WriteBehind.Ahead.send(lock(sql, "ahead-1"))
            const claimed = yield* claim(sql, "ahead-claim-1")
            const locked = yield* lock(sql, "ahead-1")
            yield* held(sql, "ahead-written-1", 1)
            return [claimed.length, locked] as const
          })
        )
        expect(exit).toEqual(Exit.succeed([1, [{ id: "ahead-1", n: 7 }]]))
        expect(trips).toEqual([
          ["BEGIN", "INSERT INTO", "SELECT id,"],
          ["WITH w0_i", "COMMIT"]
        ])
      })

      it("is dropped when another statement, or a held write, comes first: that one is sent as ever", async () => {
        await run(Effect.flatMap(SqlClient.SqlClient, (sql) => held(sql, "ahead-2", 5)))
        const other = await tripsOf((sql) =>
          Effect.gen(function* () {
            yield* WriteBehind.Ahead.send(lock(sql, "ahead-2"))
            yield* claim(sql, "ahead-claim-2")
            yield* count(sql, "ahead-2")
            return yield* lock(sql, "ahead-2")
          })
        )
        expect(other.exit).toEqual(Exit.succeed([{ id: "ahead-2", n: 5 }]))
        expect(other.trips).toEqual([
          ["BEGIN", "INSERT INTO", "SELECT id,"],
          ["SELECT count(*)::text"],
          ["SELECT id,"],
          ["COMMIT"]
        ])
        // A write held in between may change what the announced statement read: it runs again, after it.
        const written = await tripsOf((sql) =>
          Effect.gen(function* () {
            yield* WriteBehind.Ahead.send(lock(sql, "ahead-2"))
            yield* claim(sql, "ahead-claim-3")
            yield* sql`UPDATE pt_rows SET n = 6 WHERE id = 'ahead-2'`.pipe((update) =>
              WriteBehind.hold(sql, ["pt:ahead-2"], () => [{ alias: "u", statement: update }])
            )
            return yield* lock(sql, "ahead-2")
          })
        )
        expect(written.exit).toEqual(Exit.succeed([{ id: "ahead-2", n: 6 }]))
        expect(written.trips).toEqual([
          ["BEGIN", "INSERT INTO", "SELECT id,"],
          ["WITH w0_u", "SELECT id,"],
          ["COMMIT"]
        ])
      })

      it("announced with the rows it reads, is still served after a held write that names none of them, and not after one that does", async () => {
        await run(Effect.flatMap(SqlClient.SqlClient, (sql) => held(sql, "ahead-reads", 4)))
        const update = (sql: SqlClient.SqlClient, id: string, n: number) =>
          WriteBehind.hold(sql, [`pt:${id}`], () => [
            { alias: "u", statement: sql`UPDATE pt_rows SET n = ${n} WHERE id = ${id}` }
          ])
        // A settlement's shape: the movement's lock, the mandate's announced with it, the movement's write held.
        const elsewhere = await tripsOf((sql) =>
          Effect.gen(function* () {
            yield* WriteBehind.Ahead.send(lock(sql, "ahead-reads"), ["pt:ahead-reads"])
            yield* claim(sql, "ahead-reads-claim-1")
            yield* update(sql, "ahead-reads-claim-1", 1)
            return yield* lock(sql, "ahead-reads")
          })
        )
        expect(elsewhere.exit).toEqual(Exit.succeed([{ id: "ahead-reads", n: 4 }]))
        expect(elsewhere.trips).toEqual([
          ["BEGIN", "INSERT INTO", "SELECT id,"],
          ["WITH w0_u", "COMMIT"]
        ])
        const same = await tripsOf((sql) =>
          Effect.gen(function* () {
            yield* WriteBehind.Ahead.send(lock(sql, "ahead-reads"), ["pt:ahead-reads"])
            yield* claim(sql, "ahead-reads-claim-2")
            yield* update(sql, "ahead-reads", 9)
            return yield* lock(sql, "ahead-reads")
          })
        )
        expect(same.exit).toEqual(Exit.succeed([{ id: "ahead-reads", n: 9 }]))
        expect(same.trips).toEqual([
          ["BEGIN", "INSERT INTO", "SELECT id,"],
          ["WITH w0_u", "SELECT id,"],
          ["COMMIT"]
        ])
      })

      it("its failure is the failure of what comes after it, or of COMMIT: rolled back, nothing kept", async () => {
        await run(Effect.flatMap(SqlClient.SqlClient, (sql) => held(sql, "ahead-f", 1)))
        // Division by zero, at run time: parsed and planned fine, failing only where it runs.
        const failing = (sql: SqlClient.SqlClient) =>
          sql`SELECT 1 / (n - n) FROM pt_rows WHERE id = 'ahead-f'`
        const asked = await tripsOf((sql) =>
          Effect.gen(function* () {
            yield* WriteBehind.Ahead.send(failing(sql))
            const claimed = yield* claim(sql, "ahead-claim-4")
            expect(claimed.length).toBe(1)
            return yield* failing(sql)
          })
        )
        expect(Exit.isFailure(asked.exit)).toBe(true)
        expect(String(Cause.squash((asked.exit as Exit.Failure<unknown, unknown>).cause))).not.toContain(
          "aborted"
        )
        expect(asked.trips).toEqual([["BEGIN", "INSERT INTO", "SELECT 1"], ["ROLLBACK"]])
        // Never asked for, then COMMIT: not sent (PostgreSQL would roll back and call it committed).
        const unasked = await tripsOf((sql) =>
          Effect.gen(function* () {
            yield* WriteBehind.Ahead.send(failing(sql))
            yield* claim(sql, "ahead-claim-5")
            yield* held(sql, "ahead-never", 1)
          })
        )
        expect(Exit.isFailure(unasked.exit)).toBe(true)
        expect(unasked.trips).toEqual([["BEGIN", "INSERT INTO", "SELECT 1"], ["ROLLBACK"]])
        for (const id of ["ahead-claim-4", "ahead-claim-5", "ahead-never"])
          expect(await run(Effect.flatMap(SqlClient.SqlClient, (sql) => count(sql, id)))).toEqual(
            Exit.succeed(0)
          )
      })

      it("does nothing outside a batched transaction", async () => {
        await run(Effect.flatMap(SqlClient.SqlClient, (sql) => held(sql, "ahead-o", 1)))
        trips.length = 0
        const exit = await run(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            Effect.zipRight(WriteBehind.Ahead.send(lock(sql, "ahead-o")), count(sql, "ahead-o"))
          )
        )
        expect(exit).toEqual(Exit.succeed(1))
        expect(trips.flat().some((t) => t.startsWith("SELECT id,"))).toBe(false)
      })
    })
  }
)
