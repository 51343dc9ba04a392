/**
 * One-time codes against online guessing, over real HTTP on PGlite and PostgreSQL: concurrent bursts of
 * code requests and wrong guesses never pass the caps per mandate and per phone (core `Approval`), refusals
 * are `429` with `Retry-After`, a right code past a cap approves nothing, spent codes leave the wallet
 * notices, and stored hashes are keyed by the server's secret.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { it as effectIt, layer } from "@effect/vitest"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { Approval, type Ids, Store } from "@laari/core"
import { Effect, Redacted } from "effect"
import { createHash, createHmac } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeChallenges } from "../../src/Sql/Challenges.js"
import * as Migrations from "../../src/Sql/Migrations.js"
import * as PgliteClient from "../../src/Sql/Pglite/PgliteClient.js"
import * as F from "../support/Fixtures.js"
import { startOnPostgres } from "../support/PostgresServer.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

interface Env {
  readonly server: TestServer.TestServer
  /** The database itself (PostgreSQL only), to look at what is stored. */
  readonly databaseUrl: string | undefined
}

const backends: ReadonlyArray<{ name: string; skip: boolean; start: () => Promise<Env> }> = [
  {
    name: "PGlite",
    skip: false,
    start: async () => ({ server: await TestServer.start(), databaseUrl: undefined })
  },
  {
    name: "PostgreSQL",
    skip: TestDatabase.postgresUrl === undefined,
    start: async () => {
      const env = await startOnPostgres()
      return { server: env.server, databaseUrl: env.directUrl }
    }
  }
]

const query = async <T>(
  url: string,
  text: string,
  values: ReadonlyArray<unknown> = []
): Promise<Array<T>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, [...values])).rows as Array<T>
  } finally {
    await client.end()
  }
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0")
const count = <A>(xs: ReadonlyArray<A>, p: (a: A) => boolean) => xs.filter(p).length

for (const backend of backends) {
  describe.skipIf(backend.skip)(`one-time codes under brute force on ${backend.name}`, () => {
    let env: Env
    beforeAll(async () => {
      env = await backend.start()
    }, 120_000)
    afterAll(async () => {
      await env?.server.close()
    })

    const advance = (seconds: number) => env.server.ops("POST", "/ops/clock/advance", { by_seconds: seconds })

    /** A merchant with live mandates enabled. */
    const liveMerchant = async () => {
      const m = await F.merchant(env.server)
      await env.server.ops("POST", `/ops/merchants/${m.id}/features`, { mandates_live: true })
      return m
    }
    const liveMandate = async (m: F.Merchant) =>
      (await env.server.request("POST", "/mandates", { key: m.live, body: F.mandateBody() })).body
        .id as string

    const requestCode = (mandateId: string, phone: string) =>
      env.server.request("POST", `/approvals/mandates/${mandateId}/challenge`, { body: { phone } })

    const notices = async (customerId: string) =>
      (await env.server.ops("GET", `/ops/customers/${customerId}/notifications`)).body.filter(
        (n: any) => n.kind === "one_time_code"
      ) as Array<{ body: string; data: Record<string, unknown> }>

    /** Issues a code and reads it from the operator API (shown on the manual clock). */
    const code = async (mandateId: string, customer: { id: string; phone: string }) => {
      const res = await requestCode(mandateId, customer.phone)
      expect(res.status, res.text).toBe(200)
      const notice = (await notices(customer.id)).find((n) => n.data.challenge_id === res.body.challenge_id)
      return { challengeId: res.body.challenge_id as string, code: notice!.data.code as string }
    }

    const answer = (mandateId: string, challengeId: string, otp: string, action = "approve") =>
      env.server.request("POST", `/approvals/mandates/${mandateId}/${action}`, {
        body: { challenge_id: challengeId, otp }
      })

    const expectLimited = (
      res: TestServer.Response,
      limit: Approval.Limit,
      scope: Approval.Scope,
      retryAfter?: number
    ) => {
      expect(res.status, res.text).toBe(429)
      // Spelled out, not computed with Problems.approvalLimitCode, so a changed code fails here.
      const code = {
        codes: { subject: "TOO_MANY_CODES", customer: "TOO_MANY_CODES_FOR_PHONE" },
        guesses: { subject: "TOO_MANY_GUESSES", customer: "TOO_MANY_GUESSES_FOR_PHONE" }
      }[limit][scope]
      expect(res.body).toEqual({ message: expect.any(String), code })
      expect(res.body.message).toMatch(/^Too many .* try again in \d+ (minute|minutes|hours)$/)
      const seconds = Number(res.headers.get("retry-after"))
      expect(Number.isInteger(seconds) && seconds >= 1).toBe(true)
      if (retryAfter !== undefined) expect(seconds).toBe(retryAfter)
    }

    it("thirty concurrent code requests for one mandate issue exactly five; the rest wait the hour out", async () => {
      const id = await liveMandate(await liveMerchant())
      const customer = await F.customer(env.server)
      const burst = await Promise.all(Array.from({ length: 30 }, () => requestCode(id, customer.phone)))
      expect(count(burst, (r) => r.status === 200)).toBe(Approval.MaxCodesPerSubject)
      // The manual clock stands still: the window frees exactly an hour after the first code.
      for (const r of burst.filter((r) => r.status !== 200)) expectLimited(r, "codes", "subject", 3600)
      expect(await notices(customer.id)).toHaveLength(Approval.MaxCodesPerSubject)

      await advance(3599)
      expectLimited(await requestCode(id, customer.phone), "codes", "subject", 1)
      await advance(1)
      expect((await requestCode(id, customer.phone)).status).toBe(200)
    })

    it("concurrent code requests over ten mandates issue exactly ten to one phone", async () => {
      // Spread over many mandates, so only the phone's own lock keeps the requests in line.
      const m = await liveMerchant()
      const ids: Array<string> = []
      for (let i = 0; i < 10; i++) ids.push(await liveMandate(m))
      const customer = await F.customer(env.server)
      const burst = await Promise.all(
        ids.flatMap((id) =>
          Array.from({ length: 3 }, () => requestCode(id, customer.phone).then((r) => ({ id, r })))
        )
      )
      const issued = burst.filter((b) => b.r.status === 200)
      expect(issued).toHaveLength(Approval.MaxCodesPerCustomer)
      for (const b of burst.filter((b) => b.r.status !== 200)) expectLimited(b.r, "codes", "customer", 3600)
      expect(await notices(customer.id)).toHaveLength(Approval.MaxCodesPerCustomer)
      // Another phone is not held by this one's cap.
      expect((await requestCode(ids[0]!, (await F.customer(env.server)).phone)).status).toBe(200)
    })

    it("twenty concurrent wrong guesses over five codes of a mandate count exactly ten; then the right code approves nothing", async () => {
      const id = await liveMandate(await liveMerchant())
      const customer = await F.customer(env.server)
      const codes = []
      for (let i = 0; i < Approval.MaxCodesPerSubject; i++) codes.push(await code(id, customer))
      // Four guesses per code, so no code locks by itself: every counted guess answers 422.
      const burst = await Promise.all(
        codes.flatMap((c) => Array.from({ length: 4 }, () => answer(id, c.challengeId, wrong(c.code))))
      )
      expect(count(burst, (r) => r.status === 422)).toBe(Approval.MaxWrongGuessesPerSubject)
      for (const r of burst.filter((r) => r.status !== 422)) expectLimited(r, "guesses", "subject", 24 * 3600)

      const right = codes.find(() => true)!
      expectLimited(await answer(id, right.challengeId, right.code), "guesses", "subject")
      expectLimited(await answer(id, right.challengeId, right.code, "decline"), "guesses", "subject")
      expect((await env.server.request("GET", `/approvals/mandates/${id}`)).body.status).toBe("INITIATED")
      if (env.databaseUrl !== undefined) {
        const [row] = await query<{ wrong: string }>(
          env.databaseUrl,
          "SELECT sum(attempts) AS wrong, count(*) FILTER (WHERE used_at IS NOT NULL) AS used FROM challenges WHERE subject_id = $1",
          [id]
        )
        expect(Number(row!.wrong)).toBe(Approval.MaxWrongGuessesPerSubject)
      }
    })

    it("forty concurrent wrong guesses over ten mandates count exactly twenty for one phone, which then holds a new mandate", async () => {
      const m = await liveMerchant()
      const customer = await F.customer(env.server)
      // One code per mandate (the phone's ten for the hour), four guesses on each: no mandate reaches
      // its own cap, so only the phone's cap, under the phone's lock, stops the burst.
      const codes: Array<{ id: string; challengeId: string; code: string }> = []
      for (let i = 0; i < Approval.MaxCodesPerCustomer; i++) {
        const id = await liveMandate(m)
        codes.push({ id, ...(await code(id, customer)) })
      }
      const burst = await Promise.all(
        codes.flatMap((c) => Array.from({ length: 4 }, () => answer(c.id, c.challengeId, wrong(c.code))))
      )
      expect(count(burst, (r) => r.status === 422)).toBe(Approval.MaxWrongGuessesPerCustomer)
      for (const r of burst.filter((r) => r.status !== 422))
        expectLimited(r, "guesses", "customer", 24 * 3600)

      // An hour on, the phone may have codes again, but its wrong guesses still hold any mandate.
      await advance(3600)
      const fresh = await liveMandate(m)
      const c = await code(fresh, customer)
      expectLimited(await answer(fresh, c.challengeId, c.code), "guesses", "customer", 23 * 3600)
      expect((await env.server.request("GET", `/approvals/mandates/${fresh}`)).body.status).toBe("INITIATED")
    })

    it("a used code leaves its notice, an expired one too, and the stored hash is keyed", async () => {
      const m = await liveMerchant()
      const id = await liveMandate(m)
      const customer = await F.customer(env.server)
      const c = await code(id, customer)
      const ok = await answer(id, c.challengeId, c.code)
      expect(ok.status, ok.text).toBe(200)
      const used = (await notices(customer.id)).find((n) => n.data.challenge_id === c.challengeId)!
      expect(used.body).toBe("Your code was used.")
      expect(used.data.code).toBeUndefined()
      expect(JSON.stringify(used)).not.toContain(c.code)

      const other = await liveMandate(m)
      const lapsing = await code(other, customer)
      await advance(Approval.LifetimeMinutes * 60)
      const expired = (await notices(customer.id)).find((n) => n.data.challenge_id === lapsing.challengeId)!
      expect(expired.body).toBe("Your code expired unused.")
      expect(expired.data.code).toBeUndefined()

      if (env.databaseUrl !== undefined) {
        const [row] = await query<{ code_hash: string }>(
          env.databaseUrl,
          "SELECT code_hash FROM challenges WHERE id = $1",
          [c.challengeId]
        )
        const [secret] = await query<{ value: string }>(
          env.databaseUrl,
          "SELECT value FROM server_secrets WHERE name = 'one_time_codes'"
        )
        expect(row!.code_hash).not.toBe(createHash("sha256").update(c.code).digest("hex"))
        expect(row!.code_hash).toBe(
          createHmac("sha256", Buffer.from(secret!.value, "hex"))
            .update(`${c.challengeId}:${c.code}`)
            .digest("hex")
        )
        const stored = await query<{ body: string; data: unknown }>(
          env.databaseUrl,
          "SELECT body, data FROM notifications WHERE id = $1",
          [Approval.noticeId(c.challengeId as Ids.ChallengeId)]
        )
        expect(JSON.stringify(stored)).not.toContain(c.code)
      }
    })
  })
}

for (const backend of TestDatabase.backends) {
  describe.skipIf(backend.skip)(`the code-hash key on ${backend.name}`, () => {
    layer(backend.layer(), { timeout: "60 seconds" })((it) => {
      it.effect("is made by the migration, kept in server_secrets, and read the same by every process", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ readonly value: string }>`SELECT value FROM server_secrets`
          expect(rows).toHaveLength(1)
          const key = yield* (yield* Store.ChallengesStore).codeKey
          expect(key).toHaveLength(32)
          expect(hex(key)).toBe(rows[0]!.value)
          // Another process on the same database reads the same key.
          expect(hex(yield* (yield* makeChallenges).codeKey)).toBe(hex(key))
        })
      )

      it.effect(
        "if the row is gone, it is made again, and a key made in a transaction that rolls back is gone with it",
        () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const [original] = yield* sql<{ readonly value: string }>`SELECT value FROM server_secrets`
            yield* sql`DELETE FROM server_secrets`
            const fresh = yield* makeChallenges
            const rolledBack = yield* sql
              .withTransaction(Effect.flatMap(fresh.codeKey, (k) => Effect.fail(k)))
              .pipe(Effect.flip)
            expect(yield* sql`SELECT value FROM server_secrets`).toEqual([])
            const made = hex(yield* fresh.codeKey)
            expect(made).not.toBe(hex(rolledBack as Uint8Array))
            const [row] = yield* sql<{ readonly value: string }>`SELECT value FROM server_secrets`
            expect(made).toBe(row!.value)
            expect(hex(yield* fresh.codeKey)).toBe(made)
            expect(hex(yield* (yield* Store.ChallengesStore).codeKey)).toBe(made)
            yield* sql`UPDATE server_secrets SET value = ${original!.value}`
          })
      )
    })
  })
}

/** A database at 0003 holding a live code as it was stored then, migrated to the latest. */
const upgrade = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const before = Object.fromEntries(Object.entries(Migrations.migrations).filter(([name]) => name < "0004"))
  yield* Migrator.make({})({ loader: Migrator.fromRecord(before), table: "effect_sql_migrations" })
  const customerId = crypto.randomUUID()
  const challengeId = crypto.randomUUID()
  yield* sql`INSERT INTO customers ${sql.insert({
    id: customerId,
    environment: "live",
    phone: "+960 7000001",
    created_at: new Date()
  })}`
  yield* sql`INSERT INTO challenges ${sql.insert({
    id: challengeId,
    subject_kind: "mandate",
    subject_id: crypto.randomUUID(),
    customer_id: customerId,
    environment: "live",
    code_hash: createHash("sha256").update("123456").digest("hex"),
    attempts: 1,
    expires_at: new Date(Date.now() + 60_000),
    used_at: null,
    created_at: new Date()
  })}`
  yield* sql`INSERT INTO notifications (id, customer_id, environment, kind, title, body, data, created_at)
    VALUES (${crypto.randomUUID()}, ${customerId}, 'live', 'one_time_code', 'Your laari code',
      '123456 is your code', ${JSON.stringify({ code: "123456", challenge_id: challengeId })}::jsonb, now())`

  expect((yield* Migrations.run).map(([, name]) => name)).toContain("code_hardening")
  const [challenge] = yield* sql<{
    code_hash: string
    redacted_at: Date | null
    expired: boolean
    attempts: number
  }>`
    SELECT code_hash, redacted_at, expires_at <= now() AS expired, attempts FROM challenges`
  expect(challenge).toMatchObject({ code_hash: "", expired: true, attempts: 1 })
  expect(challenge!.redacted_at).not.toBeNull()
  const [notice] = yield* sql<{ body: string; data: unknown }>`SELECT body, data FROM notifications`
  expect(notice).toEqual({ body: "This code is no longer valid.", data: { challenge_id: challengeId } })
  expect(yield* sql`SELECT name FROM server_secrets`).toEqual([{ name: "one_time_codes" }])
  expect(yield* Migrations.run).toEqual([])
})

describe("migrating codes stored before 0004", () => {
  effectIt.live(
    "PGlite: old codes end, their unkeyed hashes are erased and their notices lose the code",
    () => upgrade.pipe(Effect.provide(PgliteClient.layer({})), Effect.scoped),
    60_000
  )

  effectIt.live.skipIf(TestDatabase.postgresUrl === undefined)(
    "PostgreSQL: old codes end, their unkeyed hashes are erased and their notices lose the code",
    () =>
      Effect.gen(function* () {
        const url = yield* TestDatabase.createDatabase(TestDatabase.postgresUrl!)
        yield* upgrade.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })))
      }).pipe(Effect.scoped),
    60_000
  )
})
