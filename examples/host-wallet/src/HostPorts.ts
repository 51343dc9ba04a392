/**
 * The host's ports for laari: the testkit's in-memory storage for everything but money, and the host's
 * own ledger as the `Wallet`, with its reads of a merchant's balance (`HostBalance`). `Testkit.ports()` is
 * taken apart rather than used whole, so that the host ledger REPLACES `MemoryWallet` (there is no second
 * book in this world to drift from the first).
 */
import { Crypto, type DeliveriesStore, Engine, type NoticeOutbox, Store, WallClock } from "@laari/core"
import {
  MemoryDb,
  MemoryMerchants,
  MemoryQrImages,
  MemorySeed,
  MemoryStore,
  type MemoryWallet,
  Seed
} from "@laari/testkit"
import { Chunk, Effect, Layer } from "effect"
import * as HostBalance from "./HostBalance.js"
import { HostLedger, accountId } from "./HostLedger.js"
import * as HostLedgerModule from "./HostLedger.js"

/** Every port of core (what a host brings), with the testkit's `Seed` and the host ledger. */
export type Ports =
  | Store.Ports
  | DeliveriesStore.DeliveriesStore
  | NoticeOutbox.NoticeOutbox
  | Crypto.Crypto
  | WallClock.WallClock
  | Seed.Seed
  | HostLedger

/**
 * One transaction spans both stores: the memory database's and the ledger's. The database is always
 * entered first and the ledger second, and the ledger on its own never waits for the database, so two
 * transactions cannot deadlock; a failure rolls both back, which is what laari expects of a `Wallet` in
 * its transaction (a charge refused after its transfer must not keep the money).
 */
const transactor = Layer.effect(
  Store.Transactor,
  Effect.gen(function* () {
    const db = yield* MemoryDb.MemoryDb
    const ledger = yield* HostLedger
    return {
      withTransaction: (effect) => db.withTransaction(ledger.withTransaction(effect)),
      inParts: (effect) => db.inParts(ledger.inParts(effect))
    }
  })
)

/** The host book seen as the testkit's `MemoryWallet`: where seeding and new merchants open wallets. */
const asMemoryWallet = Effect.map(HostLedger, (ledger): MemoryWallet.MemoryWalletService => {
  const trial = Effect.map(ledger.trialBalance, (t) => t.sum)
  return {
    ...ledger.wallet,
    open: (w) => ledger.openCustomer({ ...w, customerId: w.customerId as never }),
    setPayer: ledger.updateCustomer,
    balance: ledger.balance,
    ledgerTotal: trial,
    entries: Effect.map(ledger.postings, (ps) =>
      Chunk.toReadonlyArray(
        Chunk.fromIterable(
          ps.flatMap((p) => p.lines.map((l) => ({ postingId: p.id, account: l.account, amount: l.amount })))
        )
      )
    )
  }
})

/** Core's merchants store over the memory database, each sandbox payer's wallet opened in the host book. */
const merchants = Layer.effect(
  Store.MerchantRegistryStore,
  Effect.zipWith(MemoryDb.MemoryDb, asMemoryWallet, MemoryMerchants.make)
)

/**
 * The testkit's seeding (merchants, outlets, customers in the memory store) with every wallet in the host
 * ledger: `MemorySeed.make` opens wallets through this view of the host book.
 */
const seed = Layer.effect(
  Seed.Seed,
  Effect.gen(function* () {
    const ledger = yield* HostLedger
    const base = MemorySeed.make(yield* MemoryDb.MemoryDb, yield* asMemoryWallet, yield* Crypto.Crypto)
    // Balances are read by the host's own account ids, not the memory ledger's names.
    return {
      ...base,
      merchantBalance: (merchantId, environment) =>
        ledger.balance(accountId.merchant(environment, merchantId)),
      feeBalance: (environment) => ledger.balance(accountId.fees(environment)),
      ledgerTotal: Effect.map(ledger.trialBalance, (t) => t.sum)
    }
  })
)

/** A fresh world's ports: an empty memory database (without its own `Transactor`) and an empty host book. */
export const ports = (): Layer.Layer<Ports> =>
  Layer.mergeAll(seed, merchants, transactor, MemoryStore.layer, HostBalance.layer).pipe(
    Layer.provideMerge(HostLedgerModule.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        Layer.effect(MemoryDb.MemoryDb, MemoryDb.make()),
        Crypto.layerWeb,
        // The host's system clock, for the signatures' timestamps.
        WallClock.layer(() => Date.now())
      )
    )
  )

/** laari's services over the host's ports (static QR images as the testkit's placeholder bytes). */
export const layer = (): Layer.Layer<Engine.Services | Ports> =>
  Engine.layer.pipe(Layer.provideMerge(MemoryQrImages.layer), Layer.provideMerge(ports()))
