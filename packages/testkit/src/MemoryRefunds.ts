/**
 * The memory adapter of core's `RefundsStoreService`. Like every memory adapter its operations join the caller's
 * `MemoryDb` transaction, so "locked until the transaction ends" holds: nothing else runs until it ends.
 */
import { type Refund, Store } from "@laari/core"
import { type DateTime, Effect, HashMap, Option } from "effect"
import type { MemoryDbService, Row, Tables } from "./MemoryDb.js"
import { belongsTo, byLookup, insertRow, newestFirst, referenceTaken, tenantPage } from "./MemoryRows.js"

const rowValue = <A>(table: HashMap.HashMap<string, Row<A>>, id: string): A | undefined =>
  Option.getOrUndefined(HashMap.get(table, id.toLowerCase()))?.value

const paymentOf = (t: Tables, source: Refund.Source): Refund.Payment | undefined => {
  const base = { source: { kind: source.kind, id: source.id.toLowerCase() } }
  switch (source.kind) {
    case "charge": {
      const c = rowValue(t.charges, source.id)
      return c && { ...base, ...c, settled: true }
    }
    case "qr_payment": {
      const p = rowValue(t.qrPayments, source.id)
      return p && { ...base, ...p, settled: true }
    }
    case "invoice": {
      const i = rowValue(t.invoices, source.id)
      if (i === undefined) return undefined
      const sub = Option.getOrUndefined(HashMap.get(t.subscriptions, i.subscriptionId))?.value
      if (sub === undefined) return undefined
      return { ...base, ...i, customerId: sub.customerId, settled: i.status === "PAID" }
    }
  }
}

/** What a payment a reference can name has in common, whatever its kind. */
interface Referenced {
  readonly id: string
  readonly merchantId: string
  readonly environment: string
  readonly reference: string
  readonly createdAt: DateTime.Utc
}

/** Only the fields of `Refund.Payment` (the spreads above carry the whole record). */
const narrow = (p: Refund.Payment): Refund.Payment => ({
  source: p.source,
  merchantId: p.merchantId,
  environment: p.environment,
  customerId: p.customerId,
  amount: p.amount,
  amountRefunded: p.amountRefunded,
  settled: p.settled
})

const setRefunded = <A extends { readonly amount: number; readonly amountRefunded: number }>(
  table: HashMap.HashMap<string, Row<A>>,
  id: string,
  amountRefunded: number
) =>
  HashMap.modify(table, id.toLowerCase(), (row) => {
    // The CHECK of the SQL tables, here as a defect: a refund beyond the payment is a bug.
    if (amountRefunded < 0 || amountRefunded > row.value.amount)
      throw new Error(`amount refunded ${amountRefunded} outside 0..${row.value.amount}`)
    return { ...row, value: { ...row.value, amountRefunded } }
  })

export const refunds = (db: MemoryDbService): Store.RefundsStoreService => ({
  insert: (refund) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.refunds, refund.id)) return yield* Effect.dieMessage(`refund ${refund.id} exists`)
        if (referenceTaken(t.refunds, refund))
          return yield* new Store.DuplicateReference({ reference: refund.reference! })
        yield* db.update((t) => insertRow(t, "refunds", refund.id, refund))
      })
    ),
  find: (tenant, lookup) => Effect.map(db.get, (t) => byLookup(t.refunds, tenant, lookup)),
  list: (tenant, filter) =>
    Effect.map(db.get, (t) =>
      tenantPage(t.refunds, tenant, filter, (r) => {
        const matches = (kind: Refund.SourceKind, id: string | undefined) =>
          id === undefined || (r.source.kind === kind && r.source.id === id.toLowerCase())
        return (
          matches("charge", filter.chargeId) &&
          matches("qr_payment", filter.qrPaymentId) &&
          matches("invoice", filter.invoiceId)
        )
      })
    ),
  lockPayment: (tenant, source) =>
    Effect.map(db.get, (t) => {
      const p = paymentOf(t, source)
      return p !== undefined && belongsTo(p, tenant) ? narrow(p) : undefined
    }),
  paymentIdsByReference: (tenant, kind, reference, limit) =>
    Effect.map(db.get, (t) => {
      const rows: ReadonlyArray<Row<Referenced>> =
        kind === "charge" ? Array.from(HashMap.values(t.charges)) : Array.from(HashMap.values(t.qrPayments))
      return newestFirst(
        rows.filter((row) => belongsTo(row.value, tenant) && row.value.reference === reference)
      )
        .slice(0, limit)
        .map((payment) => payment.id)
    }),
  setRefunded: (source, amountRefunded) =>
    db.update((t) => {
      switch (source.kind) {
        case "charge":
          return { ...t, charges: setRefunded(t.charges, source.id, amountRefunded) }
        case "qr_payment":
          return { ...t, qrPayments: setRefunded(t.qrPayments, source.id, amountRefunded) }
        case "invoice":
          return { ...t, invoices: setRefunded(t.invoices, source.id, amountRefunded) }
      }
    })
})
