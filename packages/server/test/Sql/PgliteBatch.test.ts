/**
 * Statements on PGlite in one call each batch (`PgliteBatch`), prepared by name once they recur, and the
 * Transactor's transactions over them: a keyed charge is two calls into PGlite, as it is two round trips
 * to PostgreSQL (`Mandates.pg.test.ts`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { PGlite } from "@electric-sql/pglite"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, it } from "vitest"
import * as PgBatch from "../../src/Sql/Pg/PgBatch.js"
import * as PgliteBatch from "../../src/Sql/Pglite/PgliteBatch.js"
import * as PgPrepared from "../../src/Sql/Pg/PgPrepared.js"
import * as PgliteClient from "../../src/Sql/Pglite/PgliteClient.js"
import * as PgTransaction from "../../src/Sql/PgTransaction.js"
import * as KeyedChargeTrips from "../support/KeyedChargeTrips.js"
import * as TestServer from "../support/TestServer.js"

/** The statements a protocol message runs, each as its first three words (Parse's text, or Bind's name). */
const statementsOf = (message: Uint8Array, named: Map<string, string>): Array<string> => {
  const cstring = (at: number): readonly [string, number] => {
    const end = message.indexOf(0, at)
    return [Buffer.from(message.subarray(at, end)).toString(), end + 1]
  }
  const out: Array<string> = []
  let unnamed = ""
  for (let at = 0; at < message.length; ) {
    const type = String.fromCharCode(message[at]!)
    const length = Buffer.from(message.subarray(at + 1, at + 5)).readInt32BE(0)
    if (type === "P") {
      const [name, next] = cstring(at + 5)
      const [text] = cstring(next)
      if (name === "") unnamed = text
      else named.set(name, text)
    } else if (type === "B") {
      const [, next] = cstring(at + 5)
      const [name] = cstring(next)
      out.push(KeyedChargeTrips.firstWords(name === "" ? unnamed : (named.get(name) ?? name)))
    }
    at += 1 + length
  }
  return out
}

// Live clock: the permit test sleeps.
layer(PgliteClient.layer({}), { timeout: "60 seconds", excludeTestServices: true })("PgliteBatch", (it) => {
  const pglite = Effect.map(PgliteClient.PgliteClient, (client) => client.pglite)
  const prepared = (db: PGlite) =>
    Effect.promise(() =>
      db.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements")
    ).pipe(Effect.map((r) => r.rows.map((row) => row.statement)))

  it.effect("runs a batch in order, and after an error nothing more of it", () =>
    Effect.gen(function* () {
      const db = yield* pglite
      yield* Effect.promise(() => db.exec("CREATE TABLE batch_rows (id int PRIMARY KEY)"))
      const insert = (id: number): PgBatch.Statement => ({
        text: "INSERT INTO batch_rows VALUES ($1)",
        params: [id]
      })
      const ok = yield* PgliteBatch.run(db, [
        insert(1),
        { text: "SELECT count(*)::int AS n FROM batch_rows", params: [] }
      ])
      expect(ok.map((r) => r.rows)).toEqual([[], [{ n: 1 }]])
      const failed = yield* Effect.flip(PgliteBatch.run(db, [insert(2), insert(1), insert(3)]))
      expect(failed.statement).toBe(1)
      expect(failed.lost).toBe(false)
      expect(failed.completed).toHaveLength(1)
      expect((failed.error.cause as { code?: string }).code).toBe("23505")
      // Up to its Sync a batch is one implicit transaction: the first insert is rolled back with the
      // error, and the third never ran.
      const rows = yield* PgliteBatch.run(db, [{ text: "SELECT id FROM batch_rows ORDER BY id", params: [] }])
      expect(rows[0]!.rows).toEqual([{ id: 1 }])
    })
  )

  it.effect("sends parameters as node-postgres does, and reads rows as objects or arrays", () =>
    Effect.gen(function* () {
      const db = yield* pglite
      const at = new Date("2026-11-28T10:00:00.123Z")
      const [row, values] = yield* PgliteBatch.run(db, [
        {
          text: "SELECT $1::timestamptz AS at, $2::int[] AS ids, $3::jsonb AS doc, $4::bytea AS bin, $5::text AS gone, $6::int8 AS big",
          params: [at, [1, 2], { a: [1, "b"] }, new Uint8Array([0, 255]), undefined, 9007199254740993n]
        },
        { text: "SELECT $1::int AS a, $2::text AS b", params: [1, "x"], rowMode: "array" }
      ])
      expect(row!.rows).toEqual([
        {
          at,
          ids: [1, 2],
          doc: { a: [1, "b"] },
          bin: new Uint8Array([0, 255]),
          gone: null,
          big: 9007199254740993n
        }
      ])
      expect(values!.rows).toEqual([[1, "x"]])
    })
  )

  it.effect("delivers a notification a batch's statement sends to PGlite's listeners (wake-ups)", () =>
    Effect.gen(function* () {
      const db = yield* pglite
      const heard: Array<string> = []
      const unlisten = yield* Effect.promise(() => db.listen("batch_wake", (payload) => heard.push(payload)))
      yield* PgliteBatch.run(db, [{ text: "SELECT pg_notify('batch_wake', $1)", params: ["ping"] }])
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      yield* Effect.promise(() => unlisten())
      expect(heard).toEqual(["ping"])
    })
  )

  it.effect("prepares a recurring text once, by name, and again after a migration made it stale", () =>
    Effect.gen(function* () {
      const db = yield* pglite
      yield* Effect.promise(() => db.exec("CREATE TABLE batch_stale (id int)"))
      const select: PgBatch.Statement = { text: "SELECT * FROM batch_stale WHERE id = $1", params: [1] }
      yield* PgliteBatch.run(db, [select])
      expect(yield* prepared(db)).not.toContain(select.text)
      yield* PgliteBatch.run(db, [select])
      yield* PgliteBatch.run(db, [select])
      expect((yield* prepared(db)).filter((s) => s === select.text)).toHaveLength(1)
      // A column added under a statement that reads `*`: PostgreSQL refuses the cached plan once.
      yield* Effect.promise(() => db.exec("ALTER TABLE batch_stale ADD COLUMN label text"))
      const stale = yield* Effect.flip(PgliteBatch.run(db, [select]))
      expect((stale.error.cause as { code?: string }).code).toBe("0A000")
      yield* PgliteBatch.run(db, [select])
      const again = yield* PgliteBatch.run(db, [select])
      expect(again[0]!.fields.map((f) => f.name)).toEqual(["id", "label"])
    })
  )

  it.effect(
    "holds at most MaxNamed statements, dropping the least recently used (PGlite's session lasts)",
    () =>
      Effect.gen(function* () {
        const db = yield* pglite
        const texts = Array.from({ length: PgPrepared.MaxNamed + 20 }, (_, i) => `SELECT $1::int + ${i} AS n`)
        // Each twice: the second time names it.
        for (const [i, text] of texts.entries())
          for (let k = 0; k < 2; k++) {
            const [result] = yield* PgliteBatch.run(db, [{ text, params: [1] }])
            expect(result!.rows).toEqual([{ n: 1 + i }])
          }
        // The next batch closes what was dropped, ahead of its own statements.
        yield* PgliteBatch.run(db, [{ text: texts.at(-1)!, params: [1] }])
        const held = yield* prepared(db)
        expect(held.length).toBeLessThanOrEqual(PgPrepared.MaxNamed)
        expect(held).toContain(texts.at(-1))
        expect(held).not.toContain(texts[0])
        // A dropped text is named again when it comes back, and answers as before.
        for (let k = 0; k < 2; k++) yield* PgliteBatch.run(db, [{ text: texts[0]!, params: [2] }])
        expect(yield* prepared(db)).toContain(texts[0])
        const [again] = yield* PgliteBatch.run(db, [{ text: texts[0]!, params: [2] }])
        expect(again!.rows).toEqual([{ n: 2 }])
      })
  )

  it.effect(
    "the Transactor's transaction commits, rolls back on failure, and holds the client's permit",
    () =>
      Effect.gen(function* () {
        const client = yield* PgliteClient.PgliteClient
        const transactions = PgTransaction.over(client.sessions)
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE batch_tx (id int PRIMARY KEY)`
        yield* transactions.transaction(sql`INSERT INTO batch_tx VALUES (${1})`)
        const exit = yield* Effect.exit(
          transactions.transaction(
            Effect.zipRight(sql`INSERT INTO batch_tx VALUES (${2})`, Effect.fail("no"))
          )
        )
        expect(Exit.isFailure(exit)).toBe(true)
        // A statement of another fiber waits for the transaction (which rolls back) rather than running in
        // PGlite's one session while it is open, where it would see the row the transaction inserted.
        const [, outside] = yield* Effect.all(
          [
            Effect.exit(
              transactions.transaction(
                sql`INSERT INTO batch_tx VALUES (${3})`.pipe(
                  Effect.zipRight(Effect.sleep("50 millis")),
                  Effect.zipRight(Effect.fail("no"))
                )
              )
            ),
            Effect.zipRight(
              Effect.sleep("10 millis"),
              sql<{ n: number }>`SELECT count(*)::int AS n FROM batch_tx`
            )
          ],
          { concurrency: 2 }
        )
        expect(outside[0]!.n).toBe(1)
        expect(yield* sql<{ id: number }>`SELECT id FROM batch_tx ORDER BY id`).toEqual([{ id: 1 }])
      })
  )
})

describe("a keyed charge's calls into PGlite", () => {
  let server: TestServer.LocalTestServer
  const calls: Array<ReadonlyArray<string>> = []
  beforeAll(async () => {
    server = await TestServer.start()
    const db = await server.sql(Effect.map(PgliteClient.PgliteClient, (client) => client.pglite))
    const named = new Map<string, string>()
    const run = db.execProtocolStream.bind(db)
    db.execProtocolStream = (message, options) => {
      calls.push(statementsOf(message, named))
      return run(message, options)
    }
  }, 120_000)
  afterAll(async () => {
    await server?.close()
  })

  // As on PostgreSQL, the key's claim and the mandate's lock go in one call with BEGIN, the
  // writes and COMMIT in another.
  it(
    "are two: BEGIN, the key's claim and the mandate's lock; then the writes and COMMIT",
    () => KeyedChargeTrips.check(server, calls, "two-calls"),
    60_000
  )
})
