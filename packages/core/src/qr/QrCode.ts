/**
 * A QR code of the national scheme for one of a merchant's outlets, and the payments it produces. This
 * module is the model and its pure decisions; `QrCodes` loads, decides and writes.
 */
import { DateTime, Either, Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import * as Fields from "../kernel/Fields.js"
import type { CustomerId, Environment, MerchantId } from "../kernel/Ids.js"
import { display, MinAmount } from "../kernel/Money.js"
import * as QrScheme from "./QrScheme.js"

export const Type = QrScheme.Type
export type Type = QrScheme.Type

export const Status = Schema.Literal("ACTIVE", "INACTIVE").annotations({
  description: "`ACTIVE`: payable; `INACTIVE`: deactivated, kept, and refused to a customer who scans it"
})
export type Status = typeof Status.Type

/** A dynamic code lives 1 to 15 minutes, 15 by default. */
export const MinExpiryMinutes = 1
export const MaxExpiryMinutes = 15

/** The largest amount a code carries: the scheme's 13-character `54` field allows far more. */
export const MaxAmount = 100_000_000

/** A dynamic code's amount, and a static code's typed one: whole laari, `MinAmount` to `MaxAmount`. */
export const Amount = Schema.Number.pipe(Schema.int(), Schema.between(MinAmount, MaxAmount)).annotations({
  title: "QrAmount",
  description: `Laari (100 laari = 1 MVR), from ${MinAmount} to ${MaxAmount}`,
  message: () => ({
    message: `must be a whole number of laari from ${MinAmount} to ${MaxAmount}`,
    override: true
  })
})
const isAmount = Schema.is(Amount)

/** `expires_in_minutes` of a dynamic code. */
export const ExpiresInMinutes = Schema.Number.pipe(
  Schema.int(),
  Schema.between(MinExpiryMinutes, MaxExpiryMinutes)
).annotations({
  title: "ExpiresInMinutes",
  description: `Minutes a dynamic code stays payable, ${MinExpiryMinutes} to ${MaxExpiryMinutes} (default ${MaxExpiryMinutes})`,
  message: () => ({
    message: `must be a whole number from ${MinExpiryMinutes} to ${MaxExpiryMinutes}`,
    override: true
  })
})

export interface QrCode {
  readonly id: string
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly outletId: number
  readonly type: Type
  readonly status: Status
  readonly title: string
  readonly description: string | null
  /** Laari; `null` for a static code, whose customer types the amount. */
  readonly amount: number | null
  /** The whole QR content, exactly as rendered. */
  readonly payload: string
  readonly qrid: string
  readonly reference: string
  readonly expiresAt: DateTime.Utc | null
  readonly deactivatedAt: DateTime.Utc | null
  readonly createdAt: DateTime.Utc
}

/** What a merchant asks for; already decoded from the request. */
export interface Request {
  readonly outletId: number
  readonly type: Type
  readonly amount: number | null
  readonly expiresInMinutes: number | null
  readonly title: string | null
  readonly description: string | null
  readonly reference: string | null
}

/** The rules of each field of a request: the same schemas the server's request is decoded with. */
const RequestFields = Schema.Struct({
  amount: Fields.nullable(Amount),
  expiresInMinutes: Fields.nullable(ExpiresInMinutes),
  title: Fields.nullable(Fields.Title),
  description: Fields.nullable(Fields.Description),
  reference: Fields.nullable(Fields.Reference)
})

/**
 * The rules of `POST /qr-codes` that need no database, every problem at once: each
 * field's (its schema), and which fields each type takes, which lives only here.
 */
export const validate = (r: Request): ReadonlyArray<Fields.FieldProblem> => {
  const problems = Fields.collect(Fields.problems(RequestFields)(r))
  if (r.type === "DYNAMIC") {
    if (r.amount === null) problems.add("amount", "is required for a DYNAMIC code")
  } else {
    if (r.amount !== null) problems.add("amount", "is not allowed for a STATIC code")
    if (r.expiresInMinutes !== null) problems.add("expiresInMinutes", "is only for DYNAMIC codes")
  }
  return problems.list
}

/** A new, active code. */
export const make = (
  input: {
    id: string
    merchantId: MerchantId
    environment: Environment
    request: Request
    outletName: string
    qrid: string
    payload: string
  },
  now: DateTime.Utc
): QrCode => {
  const r = input.request
  return {
    id: input.id,
    merchantId: input.merchantId,
    environment: input.environment,
    outletId: r.outletId,
    type: r.type,
    status: "ACTIVE",
    title: r.title ?? input.outletName,
    description: r.description,
    // Stryker disable next-line ConditionalExpression: `make` gets requests `validate` passed, and it refuses an amount for a STATIC code
    amount: r.type === "DYNAMIC" ? r.amount : null,
    payload: input.payload,
    qrid: input.qrid,
    reference: r.reference ?? input.qrid,
    expiresAt: r.type === "DYNAMIC" ? Calendar.addMinutes(now, r.expiresInMinutes ?? MaxExpiryMinutes) : null,
    deactivatedAt: null,
    createdAt: now
  }
}

export const deactivate = (c: QrCode, now: DateTime.Utc): Either.Either<QrCode, "already-inactive"> =>
  c.status === "INACTIVE"
    ? Either.left("already-inactive")
    : Either.right({ ...c, status: "INACTIVE", deactivatedAt: now })

/** Why a scanned code cannot be paid. */
export type PaymentRefusal =
  | "payload-mismatch"
  | "inactive"
  | "expired"
  | "already-paid"
  | "amount-mismatch"
  | "amount-required"

export const paymentMessages: Record<PaymentRefusal, string> = {
  "payload-mismatch": "This QR code's content does not match the code that was issued",
  inactive: "This QR code is no longer active",
  expired: "This QR code has expired",
  "already-paid": "This QR code has already been paid",
  "amount-mismatch": "A dynamic QR code is paid exactly its amount",
  "amount-required": `Enter an amount of at least ${display(MinAmount)}`
}

/**
 * Whether `scanned` may be paid at `now` with the customer's `typed` amount (`null`: none typed), and
 * the amount to charge. A dynamic code stops at `expiresAt`, also for a customer who opened it before,
 * and is paid once (`alreadyPaid`): it stands for one bill, while a static code is reused.
 */
export const authorizePayment = (
  c: QrCode,
  scanned: string,
  typed: number | null,
  now: DateTime.Utc,
  alreadyPaid: boolean
): Either.Either<number, PaymentRefusal> => {
  if (scanned !== c.payload) return Either.left("payload-mismatch")
  if (c.status === "INACTIVE") return Either.left("inactive")
  if (c.type === "DYNAMIC") {
    // Stryker disable next-line ConditionalExpression: a DYNAMIC code always has an expiry (`make` sets one)
    if (c.expiresAt !== null && DateTime.greaterThanOrEqualTo(now, c.expiresAt)) return Either.left("expired")
    if (alreadyPaid) return Either.left("already-paid")
    if (typed !== null && typed !== c.amount) return Either.left("amount-mismatch")
    return Either.right(c.amount!)
  }
  // Stryker disable next-line ConditionalExpression: `isAmount(null)` is false; the `null` check only narrows the type
  if (typed === null || !isAmount(typed)) return Either.left("amount-required")
  return Either.right(typed)
}

/** A payment a code produced; `qrid` is recorded so merchants reconcile on it. */
export interface Payment {
  readonly id: string
  readonly qrCodeId: string
  readonly qrid: string
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly outletId: number
  readonly customerId: CustomerId
  readonly amount: number
  readonly fee: number
  readonly netAmount: number
  /** How much has gone back to the payer by refunds (`Refund`); at most `amount`. */
  readonly amountRefunded: number
  readonly reference: string
  readonly createdAt: DateTime.Utc
}
