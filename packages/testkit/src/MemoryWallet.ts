/**
 * The in-memory double-entry ledger behind core's `Wallet` port.
 *
 * Accounts are named strings with a balance in `Tables.balances`:
 * - `customer:<customer id>`: a customer wallet (its limit, flags and zone live in `Tables.wallets`);
 * - `merchant:<environment>:<merchant id>`: a merchant wallet;
 * - `fee:<environment>`: the service's fees;
 * - `funding:<environment>`: where sandbox top-ups come from; the only account that may go negative.
 *
 * Money only moves by postings whose legs sum to zero, so the sum of all balances is always 0. A transfer
 * is one posting (payer debit = merchant credit + fee credit), remembered by its id: repeating an id
 * returns the first receipt and moves nothing. Everything lives in `MemoryDb`, so it rolls back with the
 * caller's transaction.
 */
import { type Ids, Wallet } from "@laari/core"
import { Calendar } from "@laari/core"
import { Chunk, Context, DateTime, Effect, HashMap, Layer, Option } from "effect"
import {
  type Entry,
  MemoryDb,
  type MemoryDbService,
  type Tables,
  type TransferRecord,
  type WalletSettings
} from "./MemoryDb.js"
import type { PayerPatch } from "./Seed.js"

export const account = {
  customer: (customerId: string) => `customer:${customerId}`,
  merchant: (environment: Ids.Environment, merchantId: string) => `merchant:${environment}:${merchantId}`,
  fee: (environment: Ids.Environment) => `fee:${environment}`,
  funding: (environment: Ids.Environment) => `funding:${environment}`
} as const

const balanceOf = (t: Tables, name: string): number =>
  Option.getOrElse(HashMap.get(t.balances, name), () => 0)

/** Applies one posting; its legs must sum to zero. */
export const post = (
  t: Tables,
  postingId: string,
  legs: ReadonlyArray<readonly [string, number]>
): Tables => {
  const sum = legs.reduce((s, [, amount]) => s + amount, 0)
  if (sum !== 0) throw new Error(`posting ${postingId} is unbalanced by ${sum}`)
  let balances = t.balances
  for (const [name, amount] of legs)
    balances = HashMap.modifyAt(balances, name, (b) => Option.some(Option.getOrElse(b, () => 0) + amount))
  const entries = legs.map(([name, amount]): Entry => ({ postingId, account: name, amount }))
  return { ...t, balances, entries: Chunk.appendAll(t.entries, Chunk.fromIterable(entries)) }
}

/**
 * Records a transfer between a customer and a merchant: its posting and its record, which the balance
 * reads list (`MemoryBalance.ledgerReads`). A refund is booked the same way, kind `refund`.
 */
export const book = (
  t: Tables,
  record: Omit<TransferRecord, "postingId">,
  legs: ReadonlyArray<readonly [string, number]>
): Tables => {
  const postingId = `transfer:${record.id}`
  const posted = post(t, postingId, legs)
  return { ...posted, transferLog: Chunk.append(posted.transferLog, { ...record, postingId }) }
}

const payerOf = (t: Tables, customerId: string): Wallet.PayerAccount | undefined =>
  Option.match(HashMap.get(t.wallets, customerId), {
    onNone: () => undefined,
    onSome: (w) => ({
      customerId: w.customerId as Ids.CustomerId,
      environment: w.environment,
      balance: balanceOf(t, account.customer(customerId)) as Wallet.PayerAccount["balance"],
      limit: w.limit as Wallet.PayerAccount["limit"],
      frozen: w.frozen,
      blockedByRules: w.blockedByRules,
      timeZone: w.timeZone
    })
  })

export interface NewWallet {
  readonly customerId: string
  readonly environment: Ids.Environment
  readonly balance?: number
  readonly timeZone?: string
}

/** What tests and seeding need beyond the port. */
export interface MemoryWalletService extends Wallet.WalletService {
  /** Opens a customer wallet, funding its opening balance from the funding account. */
  readonly open: (wallet: NewWallet) => Effect.Effect<Wallet.PayerAccount>
  /** Changes a wallet's state; a balance change is booked against the funding account. */
  readonly setPayer: (customerId: string, patch: PayerPatch) => Effect.Effect<Wallet.PayerAccount>
  readonly balance: (accountName: string) => Effect.Effect<number>
  /** Sum of every balance; 0 while money is conserved. */
  readonly ledgerTotal: Effect.Effect<number>
  /** Every entry, oldest first. */
  readonly entries: Effect.Effect<ReadonlyArray<Entry>>
}

export class MemoryWallet extends Context.Tag("laari/testkit/MemoryWallet")<
  MemoryWallet,
  MemoryWalletService
>() {}

const checkBalance = (balance: number) => {
  if (!Number.isSafeInteger(balance) || balance < 0)
    throw new Error(`a wallet balance must be whole laari >= 0: ${balance}`)
}

export const make = (db: MemoryDbService): MemoryWalletService => {
  const fund = (
    t: Tables,
    postingId: string,
    customerId: string,
    environment: Ids.Environment,
    target: number
  ) => {
    const delta = target - balanceOf(t, account.customer(customerId))
    return delta === 0
      ? t
      : post(t, postingId, [
          [account.funding(environment), -delta],
          [account.customer(customerId), delta]
        ])
  }

  const open = (w: NewWallet) =>
    db.modify((t) => {
      checkBalance(w.balance ?? 0)
      if (HashMap.has(t.wallets, w.customerId)) throw new Error(`wallet ${w.customerId} exists`)
      const settings: WalletSettings = {
        customerId: w.customerId,
        environment: w.environment,
        limit: null,
        frozen: false,
        blockedByRules: false,
        timeZone: w.timeZone ?? Calendar.MaldivesZone
      }
      const opened = { ...t, wallets: HashMap.set(t.wallets, w.customerId, settings), seq: t.seq + 1 }
      const funded = fund(opened, `open:${t.seq}`, w.customerId, w.environment, w.balance ?? 0)
      return [payerOf(funded, w.customerId)!, funded]
    })

  const setPayer = (customerId: string, patch: PayerPatch) =>
    db.modify((t) => {
      const w = Option.getOrThrowWith(
        HashMap.get(t.wallets, customerId),
        () => new Error(`no wallet ${customerId}`)
      )
      const settings: WalletSettings = {
        ...w,
        ...(patch.limit !== undefined && { limit: patch.limit }),
        ...(patch.frozen !== undefined && { frozen: patch.frozen }),
        ...(patch.blockedByRules !== undefined && { blockedByRules: patch.blockedByRules }),
        ...(patch.timeZone !== undefined && { timeZone: patch.timeZone })
      }
      let next: Tables = { ...t, wallets: HashMap.set(t.wallets, customerId, settings), seq: t.seq + 1 }
      if (patch.balance !== undefined) {
        checkBalance(patch.balance)
        next = fund(next, `top-up:${t.seq}`, customerId, w.environment, patch.balance)
      }
      return [payerOf(next, customerId)!, next]
    })

  const transfer = (tr: Wallet.Transfer) =>
    Effect.gen(function* () {
      const defect = Wallet.transferDefect(tr)
      if (defect !== undefined) return yield* Effect.dieMessage(defect)
      const t = yield* db.get
      const done = Option.getOrUndefined(HashMap.get(t.transfers, tr.id))
      if (done !== undefined) return done
      const payer = payerOf(t, tr.payer)
      if (payer === undefined || payer.environment !== tr.environment)
        return yield* new Wallet.TransferRefused({ reason: "executor-error" })
      const refusal = Wallet.decideTransfer(payer, tr.amount)
      if (refusal !== undefined) return yield* new Wallet.TransferRefused({ reason: refusal })
      const receipt: Wallet.TransferReceipt = {
        id: tr.id,
        amount: tr.amount,
        fee: tr.fee,
        netAmount: (tr.amount - tr.fee) as Wallet.TransferReceipt["netAmount"],
        createdAt: yield* DateTime.now
      }
      yield* db.update((t) => ({
        ...book(
          t,
          {
            id: tr.id,
            kind: "payment",
            environment: tr.environment,
            merchantId: tr.merchant,
            payer: tr.payer,
            amount: tr.amount,
            createdAt: receipt.createdAt
          },
          [
            [account.customer(tr.payer), -tr.amount],
            [account.merchant(tr.environment, tr.merchant), tr.amount - tr.fee],
            [account.fee(tr.environment), tr.fee]
          ]
        ),
        transfers: HashMap.set(t.transfers, tr.id, receipt)
      }))
      return receipt
    }).pipe(db.withTransaction)

  /** A refund: merchant -amount, payer +amount, no fee; refused when the merchant's balance is short. */
  const reverse = (r: Wallet.Reversal) =>
    Effect.gen(function* () {
      const defect = Wallet.reversalDefect(r)
      if (defect !== undefined) return yield* Effect.dieMessage(defect)
      const t = yield* db.get
      const done = Option.getOrUndefined(HashMap.get(t.transfers, r.id))
      if (done !== undefined) return done
      const payer = payerOf(t, r.payer)
      if (payer === undefined || payer.environment !== r.environment)
        return yield* Effect.dieMessage(`reversal ${r.id}: no wallet ${r.payer} in ${r.environment}`)
      const merchantAccount = account.merchant(r.environment, r.merchant)
      const balance = balanceOf(t, merchantAccount)
      if (balance < r.amount) return yield* new Wallet.InsufficientMerchantBalance({ balance })
      const receipt: Wallet.TransferReceipt = {
        id: r.id,
        amount: r.amount,
        fee: 0 as Wallet.TransferReceipt["fee"],
        netAmount: r.amount,
        createdAt: yield* DateTime.now
      }
      yield* db.update((t) => ({
        ...post(t, `refund:${r.id}`, [
          [merchantAccount, -r.amount],
          [account.customer(r.payer), r.amount]
        ]),
        transfers: HashMap.set(t.transfers, r.id, receipt)
      }))
      return receipt
    }).pipe(db.withTransaction)

  return {
    payer: (customerId) => Effect.map(db.get, (t) => payerOf(t, customerId)),
    transfer,
    reverse,
    open,
    setPayer,
    balance: (name) => Effect.map(db.get, (t) => balanceOf(t, name)),
    ledgerTotal: Effect.map(db.get, (t) => Array.from(HashMap.values(t.balances)).reduce((s, b) => s + b, 0)),
    entries: Effect.map(db.get, (t) => Chunk.toReadonlyArray(t.entries))
  }
}

/** The ledger as core's `Wallet` and as `MemoryWallet` (with the seeding operations). */
export const layer: Layer.Layer<MemoryWallet | Wallet.Wallet, never, MemoryDb> = Layer.effectContext(
  Effect.map(MemoryDb, (db) => {
    const wallet = make(db)
    return Context.make(MemoryWallet, wallet).pipe(Context.add(Wallet.Wallet, wallet))
  })
)
