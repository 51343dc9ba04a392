/**
 * laari's `Store.LedgerReadsStore` over the host's book: a host that brings its own ledger brings the reads of
 * a merchant's balance too. A merchant's movements are laari's postings (`laari/<transfer id>`) with a line
 * on its settlement account; the fee is the same posting's line on the fee account, the moment the
 * transfer's receipt. The host's book records no kinds: every laari posting here is a payment.
 */
import { Balance, type Ids, Store } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { HostLedger, type HostLedgerService, accountId } from "./HostLedger.js"

const movements = (ledger: HostLedgerService, tenant: Ids.Tenant) =>
  Effect.gen(function* () {
    const merchant = accountId.merchant(tenant.environment, tenant.merchantId)
    const fees = accountId.fees(tenant.environment)
    const out: Array<Balance.Movement> = []
    for (const posting of yield* ledger.postings) {
      if (!posting.id.startsWith("laari/")) continue
      const line = posting.lines.find((l) => l.account === merchant)
      if (line === undefined) continue
      const transferId = posting.id.slice("laari/".length)
      const receipt = yield* ledger.receipt(transferId)
      if (receipt === undefined) continue
      const fee = posting.lines.filter((l) => l.account === fees).reduce((s, l) => s + l.amount, 0)
      out.push({ transferId, kind: "payment", net: line.amount, fee, createdAt: receipt.createdAt })
    }
    return out.sort(Balance.newestFirst)
  })

/** The customer's payments: laari's postings with a line taking from the customer's account. */
const payments = (ledger: HostLedgerService, customerId: Ids.CustomerId) =>
  Effect.gen(function* () {
    const customer = accountId.customer(customerId)
    const out: Array<Balance.PayerPayment> = []
    for (const posting of yield* ledger.postings) {
      if (!posting.id.startsWith("laari/")) continue
      const paid = posting.lines.find((l) => l.account === customer && l.amount < 0)
      const merchant = /^MERC\/(test|live)\/(.+)$/.exec(
        posting.lines.find((l) => l.account.startsWith("MERC/"))?.account ?? ""
      )
      if (paid === undefined || merchant === null) continue
      const transferId = posting.id.slice("laari/".length)
      const receipt = yield* ledger.receipt(transferId)
      if (receipt === undefined) continue
      out.push({
        transferId,
        merchantId: merchant[2] as Ids.MerchantId,
        environment: merchant[1] as Ids.Environment,
        amount: -paid.amount,
        createdAt: receipt.createdAt
      })
    }
    return out.sort(Balance.paymentsNewestFirst)
  })

export const make = (ledger: HostLedgerService): Store.LedgerReadsStoreService => ({
  available: (tenant) => ledger.balance(accountId.merchant(tenant.environment, tenant.merchantId)),
  movements: (tenant, cursor) =>
    Effect.map(movements(ledger, tenant), (all) => {
      if (cursor.startingAfter === undefined) return all.slice(0, cursor.limit)
      const at = all.findIndex((m) => m.transferId === cursor.startingAfter)
      return at < 0 ? undefined : all.slice(at + 1, at + 1 + cursor.limit)
    }),
  between: (tenant, from, to) =>
    Effect.map(movements(ledger, tenant), (all) =>
      all
        .filter((m) => DateTime.greaterThanOrEqualTo(m.createdAt, from) && DateTime.lessThan(m.createdAt, to))
        .reverse()
    ),
  payments: (customerId, limit) => Effect.map(payments(ledger, customerId), (all) => all.slice(0, limit))
})

export const layer: Layer.Layer<Store.LedgerReadsStore, never, HostLedger> = Layer.effect(
  Store.LedgerReadsStore,
  Effect.map(HostLedger, make)
)
