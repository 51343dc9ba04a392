/**
 * The host platform's own wallet ledger: a small double-entry book with its own chart of accounts, its
 * own postings and its own overdraft rule, and an adapter that offers it to laari as core's `Wallet` port.
 *
 * Accounts (ids are the host's, laari never sees them):
 * - `CUST/<customer id>`: a customer wallet, with its limit, flags and time zone;
 * - `MERC/<environment>/<merchant id>`: a merchant's settlement account;
 * - `FEES/<environment>`: the service's fee income;
 * - `TREASURY/<environment>`: where the host's top-ups come from. The only account allowed to go
 *   below zero: every other posting that would overdraw an account is refused by the book itself.
 *
 * Money only moves by postings whose lines sum to zero, so the sum of every line ever posted (and of every
 * balance) is 0. The book is one immutable value behind a single lock, with transactions that put the
 * value back when they fail, die or are interrupted; the host's `Transactor` (see `HostPorts.ts`) opens
 * one of these around each of laari's store transactions, so a charge and its transfer commit or roll
 * back together, as the port asks of a ledger that shares the caller's transaction.
 */
import { Calendar, type Ids, Wallet } from "@laari/core"
import { Chunk, Context, Data, DateTime, Effect, Either, FiberRef, HashMap, Layer, Option } from "effect"

export type AccountKind = "customer" | "merchant" | "fees" | "treasury"

export interface Account {
  readonly id: string
  readonly kind: AccountKind
  readonly environment: Ids.Environment
  readonly balance: number
  /** Only the treasury may go below zero: it stands for money coming into the platform. */
  readonly mayOverdraw: boolean
}

/** A customer wallet's settings, kept by the host beside the account. */
export interface CustomerSettings {
  readonly customerId: Ids.CustomerId
  readonly environment: Ids.Environment
  readonly limit: number | null
  readonly frozen: boolean
  readonly blockedByRules: boolean
  readonly timeZone: string
}

/** One line of a posting: positive credits `account`, negative debits it. */
export interface Line {
  readonly account: string
  readonly amount: number
}

export interface Posting {
  readonly id: string
  readonly memo: string
  readonly lines: ReadonlyArray<Line>
}

export interface Book {
  readonly accounts: HashMap.HashMap<string, Account>
  readonly customers: HashMap.HashMap<string, CustomerSettings>
  /** Oldest first. */
  readonly postings: Chunk.Chunk<Posting>
  /** laari's transfers by their id: what makes `transfer` idempotent. */
  readonly receipts: HashMap.HashMap<string, Wallet.TransferReceipt>
}

const emptyBook: Book = {
  accounts: HashMap.empty(),
  customers: HashMap.empty(),
  postings: Chunk.empty(),
  receipts: HashMap.empty()
}

export const accountId = {
  customer: (customerId: string) => `CUST/${customerId}`,
  merchant: (environment: Ids.Environment, merchantId: string) => `MERC/${environment}/${merchantId}`,
  fees: (environment: Ids.Environment) => `FEES/${environment}`,
  treasury: (environment: Ids.Environment) => `TREASURY/${environment}`
} as const

/** The book refused a posting that would take `account` below zero. */
export class Overdrawn extends Data.TaggedError("Overdrawn")<{
  readonly account: string
  readonly balance: number
}> {}

/** The account a line names, opened at zero the first time money reaches it (merchant, fees, treasury). */
const accountFor = (book: Book, id: string): Account =>
  Option.getOrElse(HashMap.get(book.accounts, id), (): Account => {
    const [prefix, environment] = id.split("/") as [string, Ids.Environment]
    const kind: AccountKind =
      prefix === "MERC"
        ? "merchant"
        : prefix === "FEES"
          ? "fees"
          : prefix === "TREASURY"
            ? "treasury"
            : "customer"
    return { id, kind, environment, balance: 0, mayOverdraw: kind === "treasury" }
  })

/**
 * Applies one posting, or refuses it when an account that may not overdraw would end below zero. An
 * unbalanced posting is a bug in the caller, not a refusal: it throws.
 */
export const post = (book: Book, posting: Posting): Either.Either<Book, Overdrawn> => {
  const sum = posting.lines.reduce((s, l) => s + l.amount, 0)
  if (sum !== 0) throw new Error(`posting ${posting.id} is unbalanced by ${sum}`)
  let accounts = book.accounts
  for (const line of posting.lines) {
    const before = accountFor({ ...book, accounts }, line.account)
    const after = { ...before, balance: before.balance + line.amount }
    if (after.balance < 0 && !after.mayOverdraw)
      return Either.left(new Overdrawn({ account: after.id, balance: after.balance }))
    accounts = HashMap.set(accounts, after.id, after)
  }
  return Either.right({ ...book, accounts, postings: Chunk.append(book.postings, posting) })
}

const balanceOf = (book: Book, id: string): number =>
  Option.match(HashMap.get(book.accounts, id), { onNone: () => 0, onSome: (a) => a.balance })

const payerOf = (book: Book, customerId: string): Wallet.PayerAccount | undefined =>
  Option.getOrUndefined(
    Option.map(HashMap.get(book.customers, customerId), (c) => ({
      customerId: c.customerId,
      environment: c.environment,
      balance: balanceOf(book, accountId.customer(customerId)) as Wallet.PayerAccount["balance"],
      limit: c.limit as Wallet.PayerAccount["limit"],
      frozen: c.frozen,
      blockedByRules: c.blockedByRules,
      timeZone: c.timeZone
    }))
  )

export interface OpenCustomer {
  readonly customerId: Ids.CustomerId
  readonly environment: Ids.Environment
  readonly balance?: number
  readonly timeZone?: string
}

export interface CustomerPatch {
  /** The balance to reach, booked against the treasury. */
  readonly balance?: number
  /** `null` clears the limit. */
  readonly limit?: number | null
  readonly frozen?: boolean
  readonly blockedByRules?: boolean
  readonly timeZone?: string
}

/** Debits and credits of every posting: they are equal, and `sum` is 0, while money is conserved. */
export interface TrialBalance {
  readonly debits: number
  readonly credits: number
  readonly sum: number
  readonly postings: number
}

export interface HostLedgerService {
  /** Runs `effect` as one ledger transaction; nested calls join it. */
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Runs `effect` inside the ledger transaction with each transaction it opens a savepoint: undone alone
   * when it fails (laari's `Transactor.inParts`).
   */
  readonly inParts: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Opens a customer wallet, funded from the treasury. */
  readonly openCustomer: (open: OpenCustomer) => Effect.Effect<Wallet.PayerAccount>
  /** Changes a customer wallet's settings or balance (a balance change is a treasury posting). */
  readonly updateCustomer: (customerId: string, patch: CustomerPatch) => Effect.Effect<Wallet.PayerAccount>
  /** Posts by hand (the host's own operations); refused when it would overdraw an account. */
  readonly post: (posting: Posting) => Effect.Effect<void, Overdrawn>
  readonly balance: (accountId: string) => Effect.Effect<number>
  readonly accounts: Effect.Effect<ReadonlyArray<Account>>
  readonly postings: Effect.Effect<ReadonlyArray<Posting>>
  /** The receipt of laari's transfer `id`, if it happened. */
  readonly receipt: (id: string) => Effect.Effect<Wallet.TransferReceipt | undefined>
  readonly trialBalance: Effect.Effect<TrialBalance>
  /** The book as laari's `Wallet` port. */
  readonly wallet: Wallet.WalletService
}

export class HostLedger extends Context.Tag("host/HostLedger")<HostLedger, HostLedgerService>() {}

export const make: Effect.Effect<HostLedgerService> = Effect.sync(() => {
  let current = emptyBook
  const lock = Effect.unsafeMakeSemaphore(1)
  const inTransaction = FiberRef.unsafeMake(false)
  const parts = FiberRef.unsafeMake(false)

  const withTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(FiberRef.get(inTransaction), (joined) =>
      joined
        ? Effect.flatMap(FiberRef.get(parts), (part) =>
            part ? savepoint(Effect.locally(effect, parts, false)) : effect
          )
        : lock.withPermits(1)(
            Effect.suspend(() => {
              const snapshot = current
              return effect.pipe(
                Effect.locally(inTransaction, true),
                // Failure, defect or interruption: the book is as it was before the transaction.
                Effect.onExit((exit) =>
                  exit._tag === "Success"
                    ? Effect.void
                    : Effect.sync(() => {
                        current = snapshot
                      })
                )
              )
            })
          )
    )

  const savepoint = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const snapshot = current
      return Effect.onExit(effect, (exit) =>
        exit._tag === "Success"
          ? Effect.void
          : Effect.sync(() => {
              current = snapshot
            })
      )
    })

  const read = withTransaction(Effect.sync(() => current))
  const write = (book: Book) =>
    Effect.sync(() => {
      current = book
    })

  /** Books the customer's balance to `target` against the treasury. */
  const fundTo = (
    book: Book,
    customerId: string,
    environment: Ids.Environment,
    target: number,
    id: string
  ) => {
    if (!Number.isSafeInteger(target) || target < 0)
      throw new Error(`a wallet balance must be whole laari >= 0: ${target}`)
    const delta = target - balanceOf(book, accountId.customer(customerId))
    if (delta === 0) return book
    return Either.getOrThrow(
      post(book, {
        id,
        memo: delta > 0 ? "top-up" : "withdrawal",
        lines: [
          { account: accountId.treasury(environment), amount: -delta },
          { account: accountId.customer(customerId), amount: delta }
        ]
      })
    )
  }

  const openCustomer = (open: OpenCustomer) =>
    withTransaction(
      Effect.gen(function* () {
        const book = yield* read
        if (HashMap.has(book.customers, open.customerId))
          return yield* Effect.dieMessage(`wallet ${open.customerId} exists`)
        const settings: CustomerSettings = {
          customerId: open.customerId,
          environment: open.environment,
          limit: null,
          frozen: false,
          blockedByRules: false,
          timeZone: open.timeZone ?? Calendar.MaldivesZone
        }
        const id = accountId.customer(open.customerId)
        const opened: Book = {
          ...book,
          customers: HashMap.set(book.customers, open.customerId, settings),
          accounts: HashMap.set(book.accounts, id, {
            id,
            kind: "customer",
            environment: open.environment,
            balance: 0,
            mayOverdraw: false
          })
        }
        const funded = fundTo(
          opened,
          open.customerId,
          open.environment,
          open.balance ?? 0,
          `open/${open.customerId}`
        )
        yield* write(funded)
        return payerOf(funded, open.customerId)!
      })
    )

  const updateCustomer = (customerId: string, patch: CustomerPatch) =>
    withTransaction(
      Effect.gen(function* () {
        const book = yield* read
        const settings = yield* Option.match(HashMap.get(book.customers, customerId), {
          onNone: () => Effect.dieMessage(`no wallet ${customerId}`),
          onSome: Effect.succeed
        })
        const next: CustomerSettings = {
          ...settings,
          ...(patch.limit !== undefined && { limit: patch.limit }),
          ...(patch.frozen !== undefined && { frozen: patch.frozen }),
          ...(patch.blockedByRules !== undefined && { blockedByRules: patch.blockedByRules }),
          ...(patch.timeZone !== undefined && { timeZone: patch.timeZone })
        }
        let updated: Book = { ...book, customers: HashMap.set(book.customers, customerId, next) }
        if (patch.balance !== undefined)
          updated = fundTo(
            updated,
            customerId,
            settings.environment,
            patch.balance,
            `adjust/${customerId}/${Chunk.size(book.postings)}`
          )
        yield* write(updated)
        return payerOf(updated, customerId)!
      })
    )

  const transfer = (tr: Wallet.Transfer) =>
    withTransaction(
      Effect.gen(function* () {
        // Figures that cannot be a payment are laari's bug, not the customer's refusal.
        const defect = Wallet.transferDefect(tr)
        if (defect !== undefined) return yield* Effect.dieMessage(defect)
        const book = yield* read
        // Idempotent on laari's id: a repeat returns the first receipt and moves nothing.
        const done = Option.getOrUndefined(HashMap.get(book.receipts, tr.id))
        if (done !== undefined) return done
        const payer = payerOf(book, tr.payer)
        // No wallet (or one of the other environment): the executor cannot pay, whatever the balance.
        if (payer === undefined || payer.environment !== tr.environment)
          return yield* new Wallet.TransferRefused({ reason: "executor-error" })
        // The port's order of refusals: frozen, blocked, limit, then balance.
        const refusal = Wallet.decideTransfer(payer, tr.amount)
        if (refusal !== undefined) return yield* new Wallet.TransferRefused({ reason: refusal })
        const posted = post(book, {
          id: `laari/${tr.id}`,
          memo: tr.memo,
          lines: [
            { account: accountId.customer(tr.payer), amount: -tr.amount },
            { account: accountId.merchant(tr.environment, tr.merchant), amount: tr.amount - tr.fee },
            { account: accountId.fees(tr.environment), amount: tr.fee }
          ]
        })
        // The book's own overdraft rule is the last word on money, whatever the check above said.
        if (Either.isLeft(posted))
          return yield* new Wallet.TransferRefused({ reason: "insufficient-balance" })
        const receipt: Wallet.TransferReceipt = {
          id: tr.id,
          amount: tr.amount,
          fee: tr.fee,
          netAmount: (tr.amount - tr.fee) as Wallet.TransferReceipt["netAmount"],
          createdAt: yield* DateTime.now
        }
        yield* write({ ...posted.right, receipts: HashMap.set(posted.right.receipts, tr.id, receipt) })
        return receipt
      })
    )

  /** A refund: the merchant's account back to the customer's, no fee; the book refuses an overdraft. */
  const reverse = (r: Wallet.Reversal) =>
    withTransaction(
      Effect.gen(function* () {
        const defect = Wallet.reversalDefect(r)
        if (defect !== undefined) return yield* Effect.dieMessage(defect)
        const book = yield* read
        const done = Option.getOrUndefined(HashMap.get(book.receipts, r.id))
        if (done !== undefined) return done
        const merchant = accountId.merchant(r.environment, r.merchant)
        const posted = post(book, {
          id: `laari/${r.id}`,
          memo: r.memo,
          lines: [
            { account: merchant, amount: -r.amount },
            { account: accountId.customer(r.payer), amount: r.amount }
          ]
        })
        if (Either.isLeft(posted))
          return yield* new Wallet.InsufficientMerchantBalance({ balance: balanceOf(book, merchant) })
        const receipt: Wallet.TransferReceipt = {
          id: r.id,
          amount: r.amount,
          fee: 0 as Wallet.TransferReceipt["fee"],
          netAmount: r.amount,
          createdAt: yield* DateTime.now
        }
        yield* write({ ...posted.right, receipts: HashMap.set(posted.right.receipts, r.id, receipt) })
        return receipt
      })
    )

  const trialBalance = Effect.map(read, (book): TrialBalance => {
    let debits = 0
    let credits = 0
    for (const posting of book.postings)
      for (const line of posting.lines) {
        if (line.amount < 0) debits -= line.amount
        else credits += line.amount
      }
    return { debits, credits, sum: credits - debits, postings: Chunk.size(book.postings) }
  })

  return {
    withTransaction,
    inParts: (effect) =>
      Effect.flatMap(FiberRef.get(inTransaction), (joined) =>
        joined ? Effect.locally(effect, parts, true) : effect
      ),
    openCustomer,
    updateCustomer,
    post: (posting) =>
      withTransaction(Effect.flatMap(read, (book) => Effect.flatMap(post(book, posting), write))),
    balance: (id) => Effect.map(read, (book) => balanceOf(book, id)),
    accounts: Effect.map(read, (book) => Array.from(HashMap.values(book.accounts))),
    postings: Effect.map(read, (book) => Chunk.toReadonlyArray(book.postings)),
    receipt: (id) => Effect.map(read, (book) => Option.getOrUndefined(HashMap.get(book.receipts, id))),
    trialBalance,
    wallet: {
      payer: (customerId) => Effect.map(read, (book) => payerOf(book, customerId)),
      transfer,
      reverse
    }
  }
})

/** The host ledger, and the same book as laari's `Wallet` port. */
export const layer: Layer.Layer<HostLedger | Wallet.Wallet> = Layer.effectContext(
  Effect.map(make, (ledger) =>
    Context.make(HostLedger, ledger).pipe(Context.add(Wallet.Wallet, ledger.wallet))
  )
)
