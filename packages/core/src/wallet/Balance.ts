/**
 * The merchant's balance and its movements, read from the ledger.
 *
 * One movement per ledger transfer naming the merchant in an environment (every payment and refund
 * does): its `net` is the transfer's entry on the merchant's account (what the balance moved by), its `fee` what the same transfer put in the fee
 * account, `gross = net + fee`. A payment's fee never passes through the merchant's account (the payer's
 * money is split at once), so the fee is shown on the payment's own row rather than as a separate `fee`
 * row: each row is then exactly one ledger transfer, and a day's rows add up to the ledger's own sums. A
 * refund (a transfer of kind `refund`, merchant to customer, no fee moved) is a row with a negative net.
 *
 * What a movement's `type` and `sourceId` are follows from the transfer's kind and id, which each payment
 * path sets (`Mandates`, `QrCodes`, `Checkout`, `Billing`): `classify`.
 */
import { DateTime, Either, Schema } from "effect"
import { Temporal } from "temporal-polyfill"
import * as Calendar from "../kernel/Calendar.js"
import type { Environment, MerchantId, Tenant } from "../kernel/Ids.js"

export const Type = Schema.Literal(
  "charge",
  "qr_payment",
  "checkout_payment",
  "invoice",
  "refund",
  "adjustment"
)
export type Type = typeof Type.Type

/** A transfer naming the merchant, as the ledger has it. */
export interface Movement {
  /** The ledger transfer's id. */
  readonly transferId: string
  /** The ledger transfer's kind (`payment`, `refund`, ...). */
  readonly kind: string
  /** The merchant account's entry in the transfer: what the balance moved by. */
  readonly net: number
  /** What the transfer put in the environment's fee account (taken out: negative). */
  readonly fee: number
  readonly createdAt: DateTime.Utc
  /**
   * What moved it, where the ledger knows without reading the id (a movement in the wallet provider's
   * core, whose transfer ids are bare UUIDs); else `classify` reads it from the kind and id.
   */
  readonly source?: { readonly type: Type; readonly sourceId: string } | undefined
}

/** A movement as merchants read it. */
export interface Transaction {
  /** The ledger transfer's id: stable, and the cursor of the list. */
  readonly id: string
  readonly type: Type
  readonly gross: number
  readonly fee: number
  readonly net: number
  readonly createdAt: DateTime.Utc
  /** The charge, QR payment, checkout session, invoice or refund that moved the money. */
  readonly sourceId: string
}

const uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
const prefixed = new RegExp(`^(mandate-charge|qr-payment|checkout|refund):(${uuid})$`, "i")
/** `Invoice.transferId`: the invoice's id and the attempt's number. */
const invoiceAttempt = new RegExp(`^(${uuid}):\\d+$`, "i")

const byPrefix: Record<string, Type> = {
  "mandate-charge": "charge",
  "qr-payment": "qr_payment",
  checkout: "checkout_payment",
  refund: "refund"
}

/**
 * The type and source of a transfer, from its kind and id. A refund is one by its kind whatever its id
 * looks like (its source is the id without a `refund:` prefix); a payment by the id its path gave it. An
 * id no path makes (an operator's correction, a future kind) is an `adjustment`, its source the id itself.
 */
export const classify = (
  kind: string,
  transferId: string
): { readonly type: Type; readonly sourceId: string } => {
  const m = prefixed.exec(transferId)
  if (kind === "refund")
    return { type: "refund", sourceId: m !== null && m[1] === "refund" ? m[2]!.toLowerCase() : transferId }
  if (kind === "payment") {
    if (m !== null && m[1] !== "refund")
      return { type: byPrefix[m[1]!.toLowerCase()]!, sourceId: m[2]!.toLowerCase() }
    const inv = invoiceAttempt.exec(transferId)
    if (inv !== null) return { type: "invoice", sourceId: inv[1]!.toLowerCase() }
  }
  return { type: "adjustment", sourceId: transferId }
}

export const transaction = (m: Movement): Transaction => ({
  id: m.transferId,
  ...(m.source ?? classify(m.kind, m.transferId)),
  gross: m.net + m.fee,
  fee: m.fee,
  net: m.net,
  createdAt: m.createdAt
})

// ---------------------------------------------------------------------------------------------------
// Settlement days
// ---------------------------------------------------------------------------------------------------

/** A Maldives calendar day, `[from, to)` in UTC: 19:00 UTC of the day before to 19:00 UTC of the day. */
export interface Day {
  readonly date: string
  readonly from: DateTime.Utc
  readonly to: DateTime.Utc
}

const datePattern = /^\d{4}-\d{2}-\d{2}$/

/** The Maldives day `date` (`YYYY-MM-DD`, a real date); `Left` with a message otherwise. */
export const day = (date: string): Either.Either<Day, string> => {
  if (!datePattern.test(date)) return Either.left("date must be a day of the form YYYY-MM-DD")
  let plain: Temporal.PlainDate
  try {
    // Stryker disable next-line ObjectLiteral: a string is always parsed strictly; `overflow` only bounds a property bag
    plain = Temporal.PlainDate.from(date, { overflow: "reject" })
  } catch {
    return Either.left(`${date} is not a calendar date`)
  }
  const start = (d: Temporal.PlainDate) =>
    Calendar.fromInstant(d.toZonedDateTime({ timeZone: Calendar.MaldivesZone }).toInstant())
  return Either.right({ date, from: start(plain), to: start(plain.add({ days: 1 })) })
}

export interface Totals {
  readonly count: number
  readonly gross: number
  readonly fee: number
  readonly net: number
}

export const totals = (rows: ReadonlyArray<Transaction>): Totals =>
  rows.reduce(
    (t, r) => ({ count: t.count + 1, gross: t.gross + r.gross, fee: t.fee + r.fee, net: t.net + r.net }),
    {
      count: 0,
      gross: 0,
      fee: 0,
      net: 0
    }
  )

export interface Settlement {
  readonly tenant: Tenant
  readonly day: Day
  /** Oldest first. */
  readonly transactions: ReadonlyArray<Transaction>
  readonly totals: Totals
}

/** A CSV cell: quoted when it holds a separator, a quote or a line break (RFC 4180). */
const cell = (value: string | number): string => {
  const text = String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export const CsvHeader = ["id", "type", "source_id", "created_at", "gross", "fee", "net"] as const

/**
 * The report as CSV: a header, one line per movement (oldest first, Maldives time), then a `total` line
 * whose gross, fee and net are the sums of the column above it. Every text cell is an id or a type the
 * service made (no merchant or customer text), so no cell can start a spreadsheet formula.
 */
export const csv = (s: Settlement): string => {
  const lines = [
    CsvHeader.join(","),
    ...s.transactions.map((t) =>
      [t.id, t.type, t.sourceId, Calendar.formatMaldives(t.createdAt), t.gross, t.fee, t.net]
        .map(cell)
        .join(",")
    ),
    ["total", "", "", s.day.date, s.totals.gross, s.totals.fee, s.totals.net].map(cell).join(",")
  ]
  return `${lines.join("\r\n")}\r\n`
}

// ---------------------------------------------------------------------------------------------------
// What the ledger reads take and give (`LedgerReadsStore`)
// ---------------------------------------------------------------------------------------------------

export interface Cursor {
  /** Only movements older than this transfer (in list order); a transfer not of the tenant is no cursor. */
  readonly startingAfter?: string | undefined
  readonly limit: number
}

/** A payment from a customer's wallet to a merchant, as the ledger has it (a transfer of kind `payment`). */
export interface PayerPayment {
  /** The ledger transfer's id: its type and source follow from it (`classify`). */
  readonly transferId: string
  readonly merchantId: MerchantId
  readonly environment: Environment
  /** What left the customer's wallet, fee included. */
  readonly amount: number
  readonly createdAt: DateTime.Utc
}

/** The order of `movements`: newest first, ties by transfer id descending. */
export const newestFirst = (a: Movement, b: Movement): number =>
  DateTime.toEpochMillis(b.createdAt) - DateTime.toEpochMillis(a.createdAt) ||
  (a.transferId < b.transferId ? 1 : a.transferId > b.transferId ? -1 : 0)

/** The order of `payments`: newest first, ties by transfer id descending. */
export const paymentsNewestFirst = (a: PayerPayment, b: PayerPayment): number =>
  DateTime.toEpochMillis(b.createdAt) - DateTime.toEpochMillis(a.createdAt) ||
  (a.transferId < b.transferId ? 1 : a.transferId > b.transferId ? -1 : 0)
