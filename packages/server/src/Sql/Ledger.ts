/**
 * The built-in double-entry ledger, in the same database as everything else, and the `Wallet.Wallet`
 * port over it.
 *
 * Accounts: customer wallets, a wallet per merchant and environment, the service's fee account and the
 * funding account sandbox money comes from (one each per environment). A transfer is one row in
 * `ledger_transfers` (primary key = the transfer id, so it happens at most once) and entries that sum to
 * zero (checked at commit).
 *
 * A customer's balance lives on its account row and moves in the transfer's transaction, under the
 * row's lock: it is what a payment is checked against. The house accounts (merchant, fee, funding) are
 * not locked by a payment: their entries are appended `rolled = false`, and `rollUp` later folds them
 * into the account's balance. A house balance is read exactly as its balance plus its entries not yet
 * folded, so no row is shared by every payment. Only the funding account may go below zero, and the
 * sum of all balances (with what is not yet folded) is always zero.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { type Ids, Money, Wallet } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { fromDate, inTransaction, int, intOrNull, one, repository, toDate } from "./Repository.js"
import * as WriteBehind from "./WriteBehind.js"

/** Account ids say whose they are, so each account exists at most once without a lookup table. */
export const accountId = {
  customer: (customerId: string) => `customer:${customerId}`,
  merchant: (merchantId: string, environment: Ids.Environment) => `merchant:${environment}:${merchantId}`,
  fee: (environment: Ids.Environment) => `fee:${environment}`,
  funding: (environment: Ids.Environment) => `funding:${environment}`
}

/** The service's own accounts (merchant, fee, funding) are opened by their first entry. */
export type HouseAccount =
  | { readonly kind: "merchant"; readonly merchantId: string; readonly environment: Ids.Environment }
  | { readonly kind: "fee"; readonly environment: Ids.Environment }
  | { readonly kind: "funding"; readonly environment: Ids.Environment }

const houseAccountId = (a: HouseAccount): string =>
  a.kind === "merchant" ? accountId.merchant(a.merchantId, a.environment) : accountId[a.kind](a.environment)

export interface AccountRow {
  readonly id: string
  readonly kind: string
  readonly environment: string
  readonly customer_id: string | null
  readonly merchant_id: string | null
  readonly balance: number | string
  readonly wallet_limit: number | string | null
  readonly frozen: boolean
  readonly blocked_by_rules: boolean
  readonly time_zone: string | null
  readonly created_at: Date
}

export const payerFromRow = (row: AccountRow): Wallet.PayerAccount => {
  const limit = intOrNull(row.wallet_limit)
  return {
    customerId: row.customer_id as Ids.CustomerId,
    environment: row.environment as Ids.Environment,
    balance: Money.Laari(int(row.balance)),
    limit: limit === null ? null : Money.Laari(limit),
    frozen: row.frozen,
    blockedByRules: row.blocked_by_rules,
    timeZone: row.time_zone!
  }
}

/** The settings of a customer wallet a payer patch may change (balance moves by transfer instead). */
export interface WalletSettings {
  readonly limit?: number | null | undefined
  readonly frozen?: boolean | undefined
  readonly blockedByRules?: boolean | undefined
  readonly timeZone?: string | undefined
}

interface TransferRow {
  readonly id: string
  readonly kind: "payment" | "funding" | "refund"
  readonly environment: string
  readonly merchant_id: string | null
  readonly customer_id: string
  readonly amount: number | string
  readonly fee: number | string
  readonly memo: string
  readonly created_at: Date
}

const receiptFromRow = (
  row: Pick<TransferRow, "id" | "amount" | "fee" | "created_at">
): Wallet.TransferReceipt => {
  const amount = int(row.amount)
  const fee = int(row.fee)
  return {
    id: row.id,
    amount: Money.Laari(amount),
    fee: Money.Laari(fee),
    netAmount: Money.Laari(amount - fee),
    createdAt: fromDate(row.created_at)
  }
}

/** What `book` writes, as sets: a payer appears once in a flush (its key), a house account any number of times. */
const BookSets = {
  transfers: WriteBehind.insertInto("ledger_transfers_inserted", "ledger_transfers", [
    "id",
    "kind",
    "environment",
    "merchant_id",
    "customer_id",
    "amount",
    "fee",
    "memo",
    "created_at"
  ]),
  payers: {
    name: "ledger_payers_moved",
    text: `UPDATE ledger_accounts a SET balance = a.balance + v.delta
      FROM json_to_recordset($1) AS v(id text, delta bigint) WHERE a.id = v.id`
  },
  houses: {
    name: "ledger_houses_opened",
    text: `INSERT INTO ledger_accounts (id, kind, environment, merchant_id, balance, created_at)
      SELECT DISTINCT ON (id) id, kind, environment, merchant_id, balance, created_at
      FROM json_populate_recordset(NULL::ledger_accounts, $1)
      ON CONFLICT (id) DO NOTHING`
  },
  entries: WriteBehind.insertInto("ledger_entries_inserted", "ledger_entries", [
    "transfer_id",
    "account_id",
    "amount",
    "rolled"
  ])
} satisfies Record<string, WriteBehind.RowSet>

/** The ledger's statements, failing with `SqlError`; `layer` and `Directory` guard them. */
export const make = (sql: SqlClient.SqlClient) => {
  const transaction = inTransaction(sql)

  const payer = (customerId: string, options: { readonly lock: boolean }) =>
    sql<AccountRow>`SELECT * FROM ledger_accounts WHERE id = ${accountId.customer(customerId)}
      ${sql.literal(options.lock ? "FOR UPDATE" : "")}`.pipe(Effect.map(one(payerFromRow)))

  const receipt = (transferId: string) =>
    sql<TransferRow>`SELECT * FROM ledger_transfers WHERE id = ${transferId}`.pipe(
      Effect.map(one(receiptFromRow))
    )

  /**
   * The payer's wallet under this transaction's lock: as remembered when this command already locked
   * and read it (`WriteBehind.Locked`; with its mandate, or by `walletLayer.payer`) and has not written
   * it since, else locked and read now, and remembered.
   */
  const lockedPayer = (customerId: string) =>
    Effect.flatMap(WriteBehind.Locked.recall<Wallet.PayerAccount>(accountId.customer(customerId)), (held) =>
      held !== undefined
        ? Effect.succeed(held)
        : Effect.tap(payer(customerId, { lock: true }), (account) =>
            WriteBehind.Locked.remember(accountId.customer(customerId), account)
          )
    )

  /**
   * Locks and remembers every wallet of `customerIds` not already held, in one statement and in id order
   * (`ORDER BY` under `FOR UPDATE` locks in that order), so two batches never wait on each other in a cycle.
   */
  const lockPayers = (customerIds: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const wanted: Array<string> = []
      for (const id of new Set(customerIds.map(accountId.customer)))
        if ((yield* WriteBehind.Locked.recall(id)) === undefined) wanted.push(id)
      if (wanted.length === 0) return
      const rows = yield* sql<AccountRow>`SELECT * FROM ledger_accounts WHERE id IN ${sql.in(wanted)}
        ORDER BY id FOR UPDATE`
      for (const row of rows) yield* WriteBehind.Locked.remember(row.id, payerFromRow(row))
    })

  /**
   * Records a transfer as one statement: its row, the customer's balance (whose row the caller has
   * locked, or just created), the house accounts opened if new (never locked: `DO NOTHING`), and the
   * entries, the house legs not yet folded into their balances. The entries sum to zero by
   * construction, and the database checks it again at commit.
   */
  const book = (
    transfer: TransferRow,
    customerDelta: number,
    houseLegs: ReadonlyArray<readonly [HouseAccount, number]>
  ): Effect.Effect<void, SqlError> => {
    const customerAccount = accountId.customer(transfer.customer_id)
    const legs = houseLegs.filter(([, amount]) => amount !== 0)
    const houses = legs.map(([account]) => ({
      id: houseAccountId(account),
      kind: account.kind,
      environment: account.environment,
      merchant_id: account.kind === "merchant" ? account.merchantId : null,
      balance: 0,
      created_at: transfer.created_at
    }))
    const entries = [
      { transfer_id: transfer.id, account_id: customerAccount, amount: customerDelta, rolled: true },
      ...legs.map(([account, amount]) => ({
        transfer_id: transfer.id,
        account_id: houseAccountId(account),
        amount,
        rolled: false
      }))
    ]
    // The CHECK on balance is the last line against an overdraft. Held until the transaction's next
    // statement or commit (`WriteBehind`): nothing reads it before.
    // Sets (`WriteBehind.RowSet`): a batch of renewals books its transfers in one go.
    return WriteBehind.holdRows(
      sql,
      [customerAccount],
      [
        [BookSets.transfers, transfer],
        [BookSets.payers, { id: customerAccount, delta: customerDelta }],
        ...houses.map((house) => [BookSets.houses, house] as const),
        ...entries.map((entry) => [BookSets.entries, entry] as const)
      ]
    )
  }

  /**
   * `Wallet.transfer`: lock the payer's wallet, return the stored receipt if this transfer id already
   * happened, refuse per `Wallet.decideTransfer`, else book payer -amount, merchant +net, fee +fee.
   * Joins the caller's transaction.
   */
  const transfer = (
    t: Wallet.Transfer
  ): Effect.Effect<Wallet.TransferReceipt, Wallet.TransferRefused | SqlError> =>
    transaction(
      Effect.gen(function* () {
        const defect = Wallet.transferDefect(t)
        if (defect !== undefined) return yield* Effect.dieMessage(defect)
        const account = yield* lockedPayer(t.payer)
        // After the lock, in a statement of its own (a new snapshot under READ COMMITTED): a concurrent
        // attempt with the same id has committed or rolled back by now, and this sees it.
        // A fresh id cannot have happened before (the primary key still says so at commit).
        const existing = t.fresh === true ? undefined : yield* receipt(t.id)
        if (existing !== undefined) return existing
        if (account === undefined || account.environment !== t.environment)
          return yield* new Wallet.TransferRefused({ reason: "executor-error" })
        const refusal = Wallet.decideTransfer(account, t.amount)
        if (refusal !== undefined) return yield* new Wallet.TransferRefused({ reason: refusal })
        const now = yield* DateTime.now
        const net = t.amount - t.fee
        const row: TransferRow = {
          id: t.id,
          kind: "payment",
          environment: t.environment,
          merchant_id: t.merchant,
          customer_id: t.payer,
          amount: t.amount,
          fee: t.fee,
          memo: t.memo,
          created_at: toDate(now)
        }
        yield* book(row, -t.amount, [
          [{ kind: "merchant", merchantId: t.merchant, environment: t.environment }, net],
          [{ kind: "fee", environment: t.environment }, t.fee]
        ])
        return receiptFromRow(row)
      })
    )

  /**
   * `Wallet.reverse` (a refund): lock the merchant's wallet, so reversals of one merchant are decided
   * one at a time (payments only ever add to it, unlocked, and `rollUp` folds without changing the sum);
   * refuse when its exact balance is short; else book merchant -amount, payer +amount, no fee. The
   * merchant's leg is appended unfolded like a payment's, and counted at once by `balance`.
   */
  const reverse = (
    r: Wallet.Reversal
  ): Effect.Effect<Wallet.TransferReceipt, Wallet.InsufficientMerchantBalance | SqlError> =>
    transaction(
      Effect.gen(function* () {
        const merchant: HouseAccount = {
          kind: "merchant",
          merchantId: r.merchant,
          environment: r.environment
        }
        yield* sql`SELECT id FROM ledger_accounts WHERE id = ${houseAccountId(merchant)} FOR UPDATE`
        // A statement after the lock: it sees every reversal committed before the lock was granted.
        const available = yield* balance(merchant)
        if (available < r.amount) return yield* new Wallet.InsufficientMerchantBalance({ balance: available })
        const now = yield* DateTime.now
        const row: TransferRow = {
          id: r.id,
          kind: "refund",
          environment: r.environment,
          merchant_id: r.merchant,
          customer_id: r.payer,
          amount: r.amount,
          fee: 0,
          memo: r.memo,
          created_at: toDate(now)
        }
        yield* book(row, r.amount, [[merchant, -r.amount]])
        return receiptFromRow(row)
      })
    )

  /** Opens a customer's wallet (empty); call in the transaction that creates the customer. */
  const openWallet = (
    customerId: string,
    environment: Ids.Environment,
    settings: { readonly limit: number | null; readonly timeZone: string },
    now: DateTime.Utc
  ) =>
    sql`INSERT INTO ledger_accounts ${sql.insert({
      id: accountId.customer(customerId),
      kind: "customer",
      environment,
      customer_id: customerId,
      balance: 0,
      wallet_limit: settings.limit,
      time_zone: settings.timeZone,
      created_at: toDate(now)
    })}`.pipe(Effect.asVoid)

  /**
   * Moves `delta` laari into (or, negative, out of) a customer wallet from the environment's funding
   * account, as a transfer with id `transferId`. The caller holds the wallet's lock (or just opened it).
   */
  const fund = (
    customerId: string,
    environment: Ids.Environment,
    delta: number,
    transferId: string,
    memo: string,
    now: DateTime.Utc
  ) =>
    delta === 0
      ? Effect.void
      : book(
          {
            id: transferId,
            kind: "funding",
            environment,
            merchant_id: null,
            customer_id: customerId,
            amount: Math.abs(delta),
            fee: 0,
            memo,
            created_at: toDate(now)
          },
          delta,
          [[{ kind: "funding", environment }, -delta]]
        )

  /** Changes a wallet's settings; the caller holds its lock. */
  const configure = (customerId: string, settings: WalletSettings) =>
    Effect.zipRight(
      WriteBehind.Locked.forget(accountId.customer(customerId)),
      configureRow(customerId, settings)
    )

  const configureRow = (customerId: string, settings: WalletSettings) => {
    const changes: Record<string, unknown> = {}
    if (settings.limit !== undefined) changes.wallet_limit = settings.limit
    if (settings.frozen !== undefined) changes.frozen = settings.frozen
    if (settings.blockedByRules !== undefined) changes.blocked_by_rules = settings.blockedByRules
    if (settings.timeZone !== undefined) changes.time_zone = settings.timeZone
    return Object.keys(changes).length === 0
      ? Effect.void
      : sql`UPDATE ledger_accounts SET ${sql.update(changes)} WHERE id = ${accountId.customer(customerId)}`.pipe(
          Effect.asVoid
        )
  }

  /** A house account's balance, exact: what is folded plus what is not yet; 0 before its first entry. */
  const balance = (account: HouseAccount) => {
    const id = houseAccountId(account)
    return sql<{ readonly balance: number | string | null }>`SELECT
        (SELECT balance FROM ledger_accounts WHERE id = ${id})
        + (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE account_id = ${id} AND NOT rolled)
        AS balance`.pipe(Effect.map((rows) => int(rows[0]?.balance ?? 0)))
  }

  /** The sum of every balance, funding and what is not yet folded included: zero while money is conserved. */
  const total = sql<{ readonly total: number | string | null }>`SELECT
      (SELECT coalesce(sum(balance), 0) FROM ledger_accounts)
      + (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE NOT rolled) AS total`.pipe(
    Effect.map((rows) => int(rows[0]?.total ?? 0))
  )

  /**
   * Folds up to `limit` entries not yet folded into their house accounts' balances, in one statement;
   * returns how many. Entries of transactions not yet committed are not seen and wait for the next
   * run, so nothing is folded twice or missed. Run by one process at a time per entry (SKIP LOCKED).
   */
  const rollUp = (limit: number) =>
    sql<{ readonly n: number | string }>`WITH picked AS (
        SELECT transfer_id, account_id FROM ledger_entries WHERE NOT rolled
        LIMIT ${limit} FOR UPDATE SKIP LOCKED),
      folded AS (
        UPDATE ledger_entries e SET rolled = true FROM picked p
        WHERE e.transfer_id = p.transfer_id AND e.account_id = p.account_id
        RETURNING e.account_id, e.amount),
      sums AS (SELECT account_id, sum(amount) AS amount, count(*) AS n FROM folded GROUP BY account_id),
      moved AS (
        UPDATE ledger_accounts a SET balance = a.balance + s.amount FROM sums s WHERE a.id = s.account_id)
      SELECT coalesce(sum(n), 0) AS n FROM sums`.pipe(Effect.map((rows) => int(rows[0]?.n ?? 0)))

  return {
    payer,
    lockedPayer,
    lockPayers,
    receipt,
    transfer,
    reverse,
    openWallet,
    fund,
    configure,
    balance,
    total,
    rollUp
  } as const
}

/** The ledger's statements (`make`) on the database of the context: for modules outside `Sql/`. */
export const ofContext = Effect.map(SqlClient.SqlClient, make)

export const walletLayer: Layer.Layer<Wallet.Wallet, never, SqlClient.SqlClient> = Layer.effect(
  Wallet.Wallet,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const ledger = make(sql)
    // In a command's transaction the payer is read under its lock (commands lock their mandate or
    // subscription first, then the payer, always in that order), so the transfer that follows need
    // not lock and read it again; a mandate's payer was locked with it (`Mandates.find`): no statement.
    const payer = (customerId: Ids.CustomerId) =>
      Effect.flatMap(WriteBehind.Locked.active, (active) =>
        active ? ledger.lockedPayer(customerId) : ledger.payer(customerId, { lock: false })
      )
    // Outside a write-behind transaction a lock would end with its statement: nothing to prepare.
    const prepare = (customerIds: ReadonlyArray<Ids.CustomerId>) =>
      Effect.flatMap(WriteBehind.Locked.active, (active) =>
        active ? ledger.lockPayers(customerIds) : Effect.void
      )
    // Its statements run on the caller's connection, in the caller's transaction: `joinsTransaction`.
    return repository({
      payer,
      transfer: ledger.transfer,
      reverse: ledger.reverse,
      prepare,
      joinsTransaction: true
    })
  })
)
