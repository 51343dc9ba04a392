/**
 * The memory adapter of `Store.LedgerReadsStore`: a merchant's movements are the memory ledger's transfer
 * records naming it in the environment (`MemoryWallet.book`), with their entries on its account and on
 * the fee account, whatever their kind, as the SQL adapter reads `ledger_transfers` and `ledger_entries`.
 */
import { Balance, type Ids, Store } from "@laari/core"
import { Chunk, DateTime, Effect, HashMap, Layer, Option } from "effect"
import { MemoryDb, type MemoryDbService, type Tables } from "./MemoryDb.js"
import { account } from "./MemoryWallet.js"

/** Every movement of `tenant`, newest first. */
const movementsOf = (t: Tables, tenant: Ids.Tenant): Array<Balance.Movement> => {
  const merchantAccount = account.merchant(tenant.environment, tenant.merchantId)
  const feeAccount = account.fee(tenant.environment)
  const byPosting = new Map<string, { net: number; fee: number }>()
  for (const e of t.entries) {
    if (e.account !== merchantAccount && e.account !== feeAccount) continue
    const sums = byPosting.get(e.postingId) ?? { net: 0, fee: 0 }
    if (e.account === merchantAccount) byPosting.set(e.postingId, { ...sums, net: sums.net + e.amount })
    else byPosting.set(e.postingId, { ...sums, fee: sums.fee + e.amount })
  }
  const out: Array<Balance.Movement> = []
  for (const r of Chunk.toReadonlyArray(t.transferLog)) {
    if (r.merchantId !== tenant.merchantId || r.environment !== tenant.environment) continue
    const sums = byPosting.get(r.postingId) ?? { net: 0, fee: 0 }
    out.push({ transferId: r.id, kind: r.kind, net: sums.net, fee: sums.fee, createdAt: r.createdAt })
  }
  return out.sort(Balance.newestFirst)
}

export const ledgerReads = (db: MemoryDbService): Store.LedgerReadsStoreService => ({
  available: (tenant) =>
    Effect.map(db.get, (t) =>
      Option.getOrElse(
        HashMap.get(t.balances, account.merchant(tenant.environment, tenant.merchantId)),
        () => 0
      )
    ),
  movements: (tenant, cursor) =>
    Effect.map(db.get, (t) => {
      const all = movementsOf(t, tenant)
      if (cursor.startingAfter === undefined) return all.slice(0, cursor.limit)
      const at = all.findIndex((m) => m.transferId === cursor.startingAfter)
      return at < 0 ? undefined : all.slice(at + 1, at + 1 + cursor.limit)
    }),
  between: (tenant, from, to) =>
    Effect.map(db.get, (t) =>
      movementsOf(t, tenant)
        .filter((m) => DateTime.greaterThanOrEqualTo(m.createdAt, from) && DateTime.lessThan(m.createdAt, to))
        .reverse()
    ),
  payments: (customerId, limit) =>
    Effect.map(db.get, (t) =>
      Chunk.toReadonlyArray(t.transferLog)
        .filter((r) => r.kind === "payment" && r.payer === customerId)
        .map(
          (r): Balance.PayerPayment => ({
            transferId: r.id,
            merchantId: r.merchantId as Ids.MerchantId,
            environment: r.environment,
            amount: r.amount,
            createdAt: r.createdAt
          })
        )
        .sort(Balance.paymentsNewestFirst)
        .slice(0, limit)
    )
})

/**
 * The memory ledger's reads, provided beside `MemoryWallet.layer` (`Testkit.ports` does). Not part of
 * `MemoryStore.layer`: a host that brings its own ledger as the `Wallet` brings its reads of it too, as
 * `examples/host-wallet` does.
 */
export const layer: Layer.Layer<Store.LedgerReadsStore, never, MemoryDb> = Layer.effect(
  Store.LedgerReadsStore,
  Effect.map(MemoryDb, ledgerReads)
)
