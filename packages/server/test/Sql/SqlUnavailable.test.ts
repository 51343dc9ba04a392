/**
 * A database that cannot be reached is `ServiceUnavailable` (a 503 for callers), never a defect; a
 * statement that is wrong is a defect; and the pg pool recovers by itself when the database returns.
 */
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Crypto, Errors, Idempotency, type Ids, Merchants, Money, Store, Wallet } from "@laari/core"
import { Cause, Context, DateTime, Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import * as Database from "../../src/Sql/Database.js"
import { Directory } from "../../src/Platform/Directory.js"
import * as PgliteClient from "../../src/Sql/Pglite/PgliteClient.js"
import * as RowCache from "../../src/Sql/RowCache.js"
import { guard, isUnavailable } from "../../src/Sql/Repository.js"
import * as Store_ from "../../src/Sql/Store.js"
import * as TcpProxy from "../support/TcpProxy.js"
import * as TestDatabase from "../support/TestDatabase.js"

const sqlError = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })
const databaseError = (code: string) => Object.assign(new Error("refused"), { severity: "ERROR", code })

/** The error an effect failed with, or the defect it died with. */
const outcome = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.exit(effect), (exit) =>
    Exit.isSuccess(exit)
      ? { _tag: "Success" as const }
      : Option.match(Cause.failureOption(exit.cause), {
          onSome: (error) => ({ _tag: "Failure" as const, error }),
          onNone: () => ({
            _tag: "Defect" as const,
            defect: Option.getOrUndefined(Cause.dieOption(exit.cause))
          })
        })
  )

const expectUnavailable = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(outcome(effect), (o) => {
    expect(o._tag).toBe("Failure")
    expect(o._tag === "Failure" && o.error).toBeInstanceOf(Errors.ServiceUnavailable)
  })

describe("the one rule for SQL failures", () => {
  it("classifies: no answer or a transient SQLSTATE is unavailable; anything else is a bug", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
      code: "ECONNREFUSED",
      syscall: "connect"
    })
    expect(isUnavailable(sqlError(refused))).toBe(true)
    expect(isUnavailable(sqlError(Object.assign(new Error("write EPIPE"), { code: "EPIPE" })))).toBe(true)
    expect(isUnavailable(sqlError(new Error("Connection terminated unexpectedly")))).toBe(true)
    expect(isUnavailable(sqlError(new Error("PGlite is closed")))).toBe(true)
    expect(isUnavailable(sqlError(undefined))).toBe(true)
    for (const code of ["08006", "53300", "57P01", "57P03", "40001", "40P01"])
      expect(isUnavailable(sqlError(databaseError(code)))).toBe(true)
    for (const code of ["23505", "23514", "42P01", "42601", "22P02"])
      expect(isUnavailable(sqlError(databaseError(code)))).toBe(false)
  })

  it.effect("guard: unavailable -> ServiceUnavailable, a bug -> defect, other errors pass through", () =>
    Effect.gen(function* () {
      const unavailable = yield* outcome(guard(Effect.fail(sqlError(new Error("Connection terminated")))))
      expect(unavailable._tag === "Failure" && unavailable.error).toBeInstanceOf(Errors.ServiceUnavailable)
      const bug = yield* outcome(guard(Effect.fail(sqlError(databaseError("42601")))))
      expect(bug._tag === "Defect" && bug.defect).toBeInstanceOf(SqlError)
      const other = yield* outcome(guard(Effect.fail("mine" as const)))
      expect(other).toEqual({ _tag: "Failure", error: "mine" })
      // What the SQL client turns into a defect (a failed COMMIT) when the connection is gone.
      const commit = yield* outcome(guard(Effect.die(sqlError(new Error("Connection terminated")))))
      expect(commit._tag === "Failure" && commit.error).toBeInstanceOf(Errors.ServiceUnavailable)
    })
  )
})

describe("starting against an unreachable PostgreSQL", () => {
  it.live("fails fast with SqlError instead of hanging", () =>
    Effect.gen(function* () {
      const started = Date.now()
      const exit = yield* Effect.exit(
        Layer.build(
          Database.layer({
            databaseUrl: "postgres://postgres@127.0.0.1:1/laari",
            bounds: { connectTimeout: "1 second" }
          })
        )
      ).pipe(Effect.scoped)
      expect(
        Exit.isFailure(exit) && Cause.failureOption(exit.cause).pipe(Option.getOrUndefined)
      ).toBeInstanceOf(SqlError)
      expect(Date.now() - started).toBeLessThan(5_000)
    })
  )
})

describe("a closed PGlite", () => {
  it.live(
    "answers ServiceUnavailable",
    () =>
      Effect.gen(function* () {
        const context = yield* Layer.build(
          Store_.layer.pipe(
            Layer.provide(Layer.merge(RowCache.layer, Crypto.layerWeb)),
            Layer.provideMerge(PgliteClient.layer({}))
          )
        )
        yield* Effect.promise(() => Context.get(context, PgliteClient.PgliteClient).pglite.close())
        const merchants = Context.get(context, Store.MerchantsStore)
        yield* expectUnavailable(merchants.get("6f1c3a52-8a0b-4f47-9b8e-7e3f1f0b9c11" as Ids.MerchantId))
      }).pipe(Effect.scoped),
    60_000
  )
})

describe.skipIf(TestDatabase.postgresUrl === undefined)("PostgreSQL going away and coming back", () => {
  it.live(
    "every kind of port answers ServiceUnavailable while it is away, and works again once it is back",
    () =>
      Effect.gen(function* () {
        const server = new URL(TestDatabase.postgresUrl!)
        const proxy = yield* TcpProxy.make({ host: server.hostname, port: Number(server.port || 5432) })
        const direct = new URL(yield* TestDatabase.createDatabase(TestDatabase.postgresUrl!))
        direct.host = `127.0.0.1:${proxy.port}`
        const context = yield* Layer.build(
          Database.layer({
            databaseUrl: direct.toString(),
            bounds: { connectTimeout: "1 second" },
            maxConnections: 4
          })
        )
        const get = <I extends Layer.Layer.Success<ReturnType<typeof Database.layer>>, S>(
          tag: Context.Tag<I, S>
        ) => Context.get(context, tag)
        const directory = get(Directory)
        const tx = get(Store.Transactor)
        const wallet = get(Wallet.Wallet)
        const merchantsStore = get(Store.MerchantRegistryStore)
        const { merchant } = yield* Merchants.creating(merchantsStore, get(Crypto.Crypto))({ name: "Flaky" })
        const tenant: Ids.Tenant = { merchantId: merchant.id, environment: "test" }
        const transfer = (id: string): Wallet.Transfer => ({
          id,
          environment: "test",
          payer: merchant.sandboxPayer,
          merchant: merchant.id,
          amount: Money.Laari(1_000),
          fee: Money.Laari(10),
          memo: "flaky"
        })
        const scope: Idempotency.Scope = { ...tenant, method: "POST", path: "/mandates", key: "k1" }
        const calls: ReadonlyArray<Effect.Effect<unknown, unknown>> = [
          get(Store.MerchantsStore).get(merchant.id),
          get(Store.MandatesStore).find(tenant, { _tag: "ByReference", reference: "r" }),
          get(Store.MandatesStore).nextExpiryAt,
          tx.withTransaction(get(Store.MandatesStore).list(tenant, { limit: 10, offset: 0 })),
          wallet.transfer(transfer("flaky:1")),
          tx.withTransaction(get(Store.IdempotencyStore).claim(scope, "fp", DateTime.unsafeNow())),
          merchantsStore.count
        ]

        // A transaction that is open when the database goes away.
        const inside = yield* Deferred.make<void>()
        const resume = yield* Deferred.make<void>()
        const open = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function* () {
              yield* wallet.transfer(transfer("flaky:open"))
              yield* Deferred.succeed(inside, undefined)
              yield* Deferred.await(resume)
              return yield* get(Store.MerchantsStore).get(merchant.id)
            })
          )
        )
        yield* Deferred.await(inside)

        yield* proxy.stop
        yield* Deferred.succeed(resume, undefined)
        const broken = yield* Fiber.await(open)
        expect(
          Exit.isFailure(broken) && Cause.failureOption(broken.cause).pipe(Option.getOrUndefined)
        ).toBeInstanceOf(Errors.ServiceUnavailable)
        for (const call of calls) yield* expectUnavailable(call)

        // Packets dropped: the connect timeout turns a hang into ServiceUnavailable.
        yield* proxy.blackhole
        const started = Date.now()
        yield* expectUnavailable(merchantsStore.count)
        expect(Date.now() - started).toBeLessThan(5_000)

        yield* proxy.stop
        yield* proxy.start
        for (const call of calls) expect((yield* outcome(call))._tag).toBe("Success")
        // The interrupted transaction left nothing behind; the later transfer went through once.
        expect((yield* wallet.payer(merchant.sandboxPayer))?.balance).toBe(10_000_000 - 1_000)
        expect(yield* directory.ledgerTotal).toBe(0)
      }).pipe(Effect.scoped),
    60_000
  )
})
