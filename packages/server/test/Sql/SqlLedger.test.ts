/**
 * The built-in double-entry ledger behind `Wallet`, on PGlite and (with DATABASE_URL) PostgreSQL:
 * refusal order, idempotent repeats, balanced entries, the database's own guards, and concurrency.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { expect } from "@effect/vitest"
import { Crypto, type Ids, Money, Store, Wallet } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Cause, Data, Effect, Either, Exit, Option } from "effect"
import { Directory } from "../../src/Platform/Directory.js"
import * as Ledger from "../../src/Sql/Ledger.js"
import * as TestDatabase from "../support/TestDatabase.js"

const uuid = Effect.flatMap(Crypto.Crypto, (c) => c.uuid)

/** A merchant and a test customer holding `balance`. */
const parties = (balance: number) =>
  Effect.gen(function* () {
    const seed = yield* Seed.Seed
    const merchant = yield* seed.merchant({ name: "Ledger merchant" })
    const customer = yield* seed.customer({ environment: "test", phone: `+960 ${yield* uuid}`, balance })
    return { merchant, customer }
  })

const payment = (payer: Ids.CustomerId, merchant: Ids.MerchantId, amount: number, fee: number) =>
  Effect.map(
    uuid,
    (id): Wallet.Transfer => ({
      id: `test:${id}`,
      environment: "test",
      payer,
      merchant,
      amount: Money.Laari(amount),
      fee: Money.Laari(fee),
      memo: "ledger test"
    })
  )

const entriesOf = (transferId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ account_id: string; amount: number | string }>`SELECT account_id, amount FROM ledger_entries
      WHERE transfer_id = ${transferId} ORDER BY amount`.pipe(
      Effect.map((rows) => rows.map((r) => [r.account_id, Number(r.amount)] as const))
    )
  )

/** The whole ledger adds up: every balance is the sum of its entries, every transfer sums to zero. */
const expectConsistent = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const drifted = yield* sql`SELECT a.id FROM ledger_accounts a
    LEFT JOIN (SELECT account_id, sum(amount) AS total FROM ledger_entries WHERE rolled GROUP BY account_id) e ON e.account_id = a.id
    WHERE a.balance <> coalesce(e.total, 0)`
  expect(drifted).toEqual([])
  const unbalanced =
    yield* sql`SELECT transfer_id FROM ledger_entries GROUP BY transfer_id HAVING sum(amount) <> 0`
  expect(unbalanced).toEqual([])
  expect(yield* (yield* Seed.Seed).ledgerTotal).toBe(0)
})

const balanceOf = (customerId: Ids.CustomerId) =>
  Effect.flatMap(Wallet.Wallet, (wallet) => Effect.map(wallet.payer(customerId), (p) => p?.balance))

TestDatabase.eachBackend("SQL ledger", (it, backend) => {
  it.effect("a payment writes balanced entries: payer -amount, merchant +net, fee account +fee", () =>
    Effect.gen(function* () {
      const seed = yield* Seed.Seed
      const wallet = yield* Wallet.Wallet
      const { merchant, customer } = yield* parties(50_000)
      const feeBefore = yield* seed.feeBalance("test")
      const t = yield* payment(customer.id, merchant.id, 12_350, 124)
      const receipt = yield* wallet.transfer(t)
      expect(receipt).toMatchObject({ id: t.id, amount: 12_350, fee: 124, netAmount: 12_226 })
      expect(yield* entriesOf(t.id)).toEqual([
        [`customer:${customer.id}`, -12_350],
        ["fee:test", 124],
        [`merchant:test:${merchant.id}`, 12_226]
      ])
      expect(yield* balanceOf(customer.id)).toBe(37_650)
      expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(12_226)
      expect((yield* seed.feeBalance("test")) - feeBefore).toBe(124)
      yield* expectConsistent
    })
  )

  it.effect(
    "a payment never locks a house account; rollUp folds its entries and every balance stays exact",
    () =>
      Effect.gen(function* () {
        const seed = yield* Seed.Seed
        const sql = yield* SqlClient.SqlClient
        const wallet = yield* Wallet.Wallet
        const ledger = Ledger.make(sql)
        const { merchant, customer } = yield* parties(50_000)
        const stored = (id: string) =>
          sql<{ balance: number | string }>`SELECT balance FROM ledger_accounts WHERE id = ${id}`.pipe(
            Effect.map((rows) => Number(rows[0]!.balance))
          )
        const account = `merchant:test:${merchant.id}`
        // Another transaction holds the fee account's row: a payment still goes through (on
        // PostgreSQL on another connection, while the row is held; PGlite has one connection, so
        // there it runs after the holder commits).
        const other = yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`SELECT 1 FROM ledger_accounts WHERE id = 'fee:test' FOR UPDATE`
            const fiber = yield* Effect.fork(
              Effect.flatMap(payment(customer.id, merchant.id, 10_000, 100), wallet.transfer)
            )
            return backend.name === "PostgreSQL" ? yield* fiber.await : fiber
          })
        )
        const exit = Exit.isExit(other) ? other : yield* other.await
        expect(Exit.isSuccess(exit)).toBe(true)
        yield* Effect.flatMap(payment(customer.id, merchant.id, 5_000, 50), wallet.transfer)
        expect(yield* stored(account)).toBe(0)
        expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(14_850)
        yield* expectConsistent
        expect(yield* ledger.rollUp(1_000_000)).toBeGreaterThanOrEqual(2)
        expect(yield* stored(account)).toBe(14_850)
        expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(14_850)
        expect(yield* ledger.rollUp(1_000_000)).toBe(0)
        expect(yield* seed.ledgerTotal).toBe(0)
        yield* expectConsistent
      })
  )

  it.effect("a fee of zero writes no fee entry", () =>
    Effect.gen(function* () {
      const wallet = yield* Wallet.Wallet
      const { merchant, customer } = yield* parties(1_000)
      const t = yield* payment(customer.id, merchant.id, 1_000, 0)
      expect((yield* wallet.transfer(t)).netAmount).toBe(1_000)
      expect(yield* entriesOf(t.id)).toEqual([
        [`customer:${customer.id}`, -1_000],
        [`merchant:test:${merchant.id}`, 1_000]
      ])
      yield* expectConsistent
    })
  )

  it.effect("repeating a transfer id returns the stored receipt and writes nothing", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const wallet = yield* Wallet.Wallet
      const { merchant, customer } = yield* parties(10_000)
      const t = yield* payment(customer.id, merchant.id, 4_000, 40)
      const first = yield* wallet.transfer(t)
      const count = sql<{ n: number | string }>`SELECT count(*) AS n FROM ledger_entries`.pipe(
        Effect.map((rows) => Number(rows[0]!.n))
      )
      const entries = yield* count
      // Even when the payer could no longer afford it: the transfer already happened.
      const again = yield* wallet.transfer({ ...t, amount: Money.Laari(9_000) })
      expect(again).toEqual(first)
      expect(yield* count).toBe(entries)
      expect(yield* balanceOf(customer.id)).toBe(6_000)
      yield* expectConsistent
    })
  )

  it.effect("refuses in decideTransfer order; an unknown or other-environment payer is executor-error", () =>
    Effect.gen(function* () {
      const seed = yield* Seed.Seed
      const sql = yield* SqlClient.SqlClient
      const wallet = yield* Wallet.Wallet
      const { merchant, customer } = yield* parties(5_000)
      const t = yield* payment(customer.id, merchant.id, 6_000, 60)
      const refusal = (transfer: Wallet.Transfer) =>
        Effect.map(Effect.flip(wallet.transfer(transfer)), (e) =>
          e._tag === "TransferRefused" ? e.reason : e._tag
        )
      yield* seed.setPayer(customer.id, { frozen: true, blockedByRules: true, limit: 1_000 })
      expect(yield* refusal(t)).toBe("wallet-frozen")
      yield* seed.setPayer(customer.id, { frozen: false })
      expect(yield* refusal(t)).toBe("blocked-by-rules")
      yield* seed.setPayer(customer.id, { blockedByRules: false })
      expect(yield* refusal(t)).toBe("wallet-limit")
      yield* seed.setPayer(customer.id, { limit: null })
      expect(yield* refusal(t)).toBe("insufficient-balance")
      expect(yield* refusal({ ...t, payer: (yield* uuid) as Ids.CustomerId })).toBe("executor-error")
      expect(yield* refusal({ ...t, environment: "live" })).toBe("executor-error")
      // A refusal leaves no transfer behind.
      expect(yield* sql`SELECT id FROM ledger_transfers WHERE id = ${t.id}`).toEqual([])
      expect(yield* balanceOf(customer.id)).toBe(5_000)
      yield* expectConsistent
    })
  )

  it.effect("joins the caller's transaction and rolls back with it", () =>
    Effect.gen(function* () {
      const tx = yield* Store.Transactor
      const wallet = yield* Wallet.Wallet
      const { merchant, customer } = yield* parties(10_000)
      const t = yield* payment(customer.id, merchant.id, 3_000, 30)
      class Abort extends Data.TaggedError("Abort") {}
      const outcome = yield* tx
        .withTransaction(Effect.zipRight(wallet.transfer(t), Effect.fail(new Abort())))
        .pipe(Effect.either)
      expect(Either.isLeft(outcome)).toBe(true)
      expect(yield* balanceOf(customer.id)).toBe(10_000)
      expect(yield* entriesOf(t.id)).toEqual([])
      yield* wallet.transfer(t)
      expect(yield* balanceOf(customer.id)).toBe(7_000)
      yield* expectConsistent
    })
  )

  it.effect("setPayer books a balance change against the funding account", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const directory = yield* Directory
      const { customer } = yield* parties(1_000)
      const funding = sql<{
        balance: number | string
      }>`SELECT balance + (SELECT coalesce(sum(amount), 0) FROM ledger_entries
              WHERE account_id = 'funding:test' AND NOT rolled) AS balance
            FROM ledger_accounts WHERE id = 'funding:test'`.pipe(
        Effect.map((rows) => Number(rows[0]!.balance))
      )
      const before = yield* funding
      expect(
        yield* directory.setPayer(customer.id, { balance: 4_500, timeZone: "Asia/Kolkata" })
      ).toMatchObject({
        balance: 4_500,
        timeZone: "Asia/Kolkata"
      })
      expect(yield* funding).toBe(before - 3_500)
      yield* directory.setPayer(customer.id, { balance: 500 })
      expect(yield* funding).toBe(before + 500)
      const kinds = yield* sql<{
        kind: string
        amount: number | string
      }>`SELECT kind, amount FROM ledger_transfers
            WHERE customer_id = ${customer.id} ORDER BY created_at, amount`
      expect(kinds.map((k) => [k.kind, Number(k.amount)])).toEqual([
        ["funding", 1_000],
        ["funding", 3_500],
        ["funding", 4_000]
      ])
      expect(yield* directory.setPayer((yield* uuid) as Ids.CustomerId, { balance: 1 })).toBeUndefined()
      yield* expectConsistent
    })
  )

  it.effect("the database itself refuses an overdraft and unbalanced entries", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { merchant, customer } = yield* parties(100)
      const overdraft = yield* Effect.flip(
        sql`UPDATE ledger_accounts SET balance = balance - 101 WHERE id = ${`customer:${customer.id}`}`
      )
      expect((overdraft.cause as { code?: string }).code).toBe("23514")

      // One leg only: refused when the transaction commits (a defect: it is a bug, not an outage).
      const exit = yield* Effect.exit(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO ledger_transfers ${sql.insert({
              id: "test:unbalanced",
              kind: "payment",
              environment: "test",
              merchant_id: merchant.id,
              customer_id: customer.id,
              amount: 100,
              fee: 0,
              memo: "one leg",
              created_at: new Date()
            })}`
            yield* sql`INSERT INTO ledger_entries ${sql.insert({
              transfer_id: "test:unbalanced",
              account_id: `customer:${customer.id}`,
              amount: -100
            })}`
          })
        )
      )
      const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
      expect(Option.isSome(defect) && defect.value instanceof SqlError).toBe(true)
      expect(yield* sql`SELECT id FROM ledger_transfers WHERE id = 'test:unbalanced'`).toEqual([])

      // A booked entry's amount changed afterwards: refused at commit too.
      const transfer = yield* payment(customer.id, merchant.id, 40, 1)
      yield* (yield* Wallet.Wallet).transfer(transfer)
      const changed = yield* Effect.exit(
        sql.withTransaction(
          sql`UPDATE ledger_entries SET amount = amount + 1 WHERE transfer_id = ${transfer.id} AND amount < 0`
        )
      )
      expect(Exit.isFailure(changed)).toBe(true)
      yield* expectConsistent
    })
  )

  // PGlite runs one transaction at a time, so only PostgreSQL shows real concurrency.
  if (backend.name === "PostgreSQL") {
    it.effect("concurrent transfers from one wallet never overdraw it", () =>
      Effect.gen(function* () {
        const tx = yield* Store.Transactor
        const wallet = yield* Wallet.Wallet
        const { merchant, customer } = yield* parties(10_000)
        const transfers = yield* Effect.all(
          Array.from({ length: 30 }, () => payment(customer.id, merchant.id, 1_000, 10))
        )
        const outcomes = yield* Effect.all(
          transfers.map((t) => Effect.either(tx.withTransaction(wallet.transfer(t)))),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter(Either.isRight)).toHaveLength(10)
        for (const o of outcomes.filter(Either.isLeft))
          expect(o.left).toMatchObject({ _tag: "TransferRefused", reason: "insufficient-balance" })
        expect(yield* balanceOf(customer.id)).toBe(0)
        expect(yield* (yield* Seed.Seed).merchantBalance(merchant.id, "test")).toBe(9_900)
        yield* expectConsistent
      })
    )

    it.effect("many payers paying one merchant at once neither deadlock nor lose money", () =>
      Effect.gen(function* () {
        const seed = yield* Seed.Seed
        const wallet = yield* Wallet.Wallet
        const merchant = yield* seed.merchant({ name: "Busy merchant" })
        const payers = yield* Effect.all(
          Array.from({ length: 20 }, () =>
            Effect.flatMap(uuid, (id) =>
              seed.customer({ environment: "test", phone: `+960 ${id}`, balance: 5_000 })
            )
          )
        )
        const transfers = yield* Effect.all(
          payers.flatMap((p) => [
            payment(p.id, merchant.id, 2_000, 20),
            payment(p.id, merchant.id, 2_000, 20)
          ])
        )
        yield* Effect.all(
          transfers.map((t) => wallet.transfer(t)),
          { concurrency: "unbounded" }
        )
        expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(40 * 1_980)
        for (const p of payers) expect(yield* balanceOf(p.id)).toBe(1_000)
        yield* expectConsistent
      })
    )
  }
})
