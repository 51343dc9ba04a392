/**
 * Every error answer of the API, as one schema per error: the error's status, its description and the
 * body exactly as sent, `{ message, code, errors? }` (DESIGN section 9).
 *
 * Endpoints list the errors they can fail with (`addError(Problems.MandateNotFound)`): that documents
 * them in `/openapi.json` and lets the compiler refuse a handler failing with anything unlisted. HttpApi
 * encodes a failure with the first error schema of the whole API whose type accepts it, so an error's
 * status belongs to the error, not to the endpoint, and is written here once. Where one error answers
 * with several statuses (a charge refusal's code, a payment's reason) each status is its own schema,
 * accepting only its codes, so the document says which codes each status carries.
 *
 * Every body carries a `code`, an UPPER_SNAKE constant declared on its schema (the spec's where it names
 * one): the alternatives one status of one operation may answer with (a `409` "request in progress" or
 * "reference taken") are told apart by it, so a client knows whether to retry without reading `message`.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Approvals,
  Auth,
  Checkout,
  Errors,
  Idempotency,
  Mandate,
  Mandates,
  QrCodes,
  Refunds,
  Store,
  Subscriptions,
  Webhook
} from "@laari/core"
import { Option, ParseResult, Schema } from "effect"
import { OutcomeUnknown } from "../Sql/Repository.js"

// ---------------------------------------------------------------------------------------------------------
// Errors only the HTTP edge has.

/** `401` for a missing, unknown or revoked key, or a wrong operator token. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}) {
  static readonly invalidKey = new Unauthorized({ message: "Invalid API key" })
  /** An access token (`lat_...`) told apart from a key: a client then knows to request a new one. */
  static readonly invalidToken = new Unauthorized({
    message: "Invalid access token: it has expired or was revoked; request a new one at POST /oauth/token"
  })
}

/** `429` past a rate limit; the `Retry-After` and `RateLimit-*` headers are set by the limiter. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  message: Schema.String
}) {}

/** `404` for what does not exist here: an unknown route, a sandbox-only endpoint under a live key. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.optionalWith(Schema.String, { default: () => "Not found" })
}) {}

/** `409` for an operator's write that another resource already holds (a customer's phone). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", { message: Schema.String }) {}

/** `400`: a body that is not JSON, cannot be read, or nests too deep. */
export class MalformedBody extends Schema.TaggedError<MalformedBody>()("MalformedBody", {
  message: Schema.String
}) {}

/** `413`: a body over `LAARI_MAX_BODY_BYTES`. */
export class BodyTooLarge extends Schema.TaggedError<BodyTooLarge>()("BodyTooLarge", {
  message: Schema.String
}) {
  static of(maxBodyBytes: number): BodyTooLarge {
    return new BodyTooLarge({ message: `The request body is larger than ${maxBodyBytes} bytes` })
  }
}

/** `415`: a body of another content type than JSON. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  message: Schema.optionalWith(Schema.String, { default: () => "Content-Type must be application/json" })
}) {}

// ---------------------------------------------------------------------------------------------------------
// The body and the schema of one error.

const Message = Schema.String.annotations({ description: "What went wrong, in words a person can act on" })

/** The documented shape of every error body; each error's schema below is one of its variants. */
export const Body = Schema.Struct({
  message: Message,
  code: Schema.String.annotations({
    description: "A stable UPPER_SNAKE constant naming the error; each error's schema declares its own"
  }),
  errors: Schema.optional(Schema.Array(Errors.FieldError))
}).annotations({ identifier: "Error" })

/** A class of errors; `never` arguments accept every constructor. */
type ErrorClass<E> = abstract new (...args: never) => E

const isInstance =
  <E>(Class: ErrorClass<E>) =>
  (u: unknown): u is E =>
    u instanceof Class

/** Every error schema below with its status, for the answers given outside HttpApi's encoding. */
const registry: Array<{ readonly status: number; readonly encode: (u: unknown) => Option.Option<unknown> }> =
  []

/**
 * The schema of an error answered with `status`: encodes the values `is` accepts into `body(e)`.
 * Error bodies are only ever encoded by the server; decoding one is refused.
 */
const problem = <E, W>(
  identifier: string,
  status: number,
  description: string,
  is: (u: unknown) => u is E,
  wire: Schema.Schema<W>,
  body: (e: E) => W
) => {
  const schema = Schema.transformOrFail(wire, Schema.declare(is, { identifier: `${identifier}Value` }), {
    strict: true,
    decode: (w, _, ast) =>
      ParseResult.fail(new ParseResult.Forbidden(ast, w, "Error bodies are encode-only")),
    encode: (e) => ParseResult.succeed(body(e))
  }).annotations({ identifier, ...HttpApiSchema.annotations({ status, description }) })
  registry.push({ status, encode: Schema.encodeUnknownOption(schema) })
  return schema
}

/**
 * The status and body an error is answered with: what HttpApi sends for it, computed by the same schema.
 * Used where the answer is stored (idempotent replays) or sent outside HttpApi (the body checks).
 */
export const answer = (e: unknown): { readonly status: number; readonly body: unknown } | undefined => {
  for (const entry of registry) {
    const body = entry.encode(e)
    if (Option.isSome(body)) return { status: entry.status, body: body.value }
  }
  return undefined
}

/** The response for an error of this module; an error none of them accepts is a defect. */
export const respond = (e: unknown): HttpServerResponse.HttpServerResponse => {
  const found = answer(e)
  if (found === undefined) throw new Error(`No error schema accepts ${String(e)}`)
  return HttpServerResponse.unsafeJson(found.body, { status: found.status })
}

/** The `code` of a body: the one value it may take, declared so the document tells alternatives apart. */
const Code = <const C extends string>(code: C) => Schema.Literal(code)

/** An error whose body is its `message` and its one `code`. */
export const plain = <E extends { readonly message: string }, const C extends string>(
  Class: ErrorClass<E>,
  identifier: string,
  status: number,
  description: string,
  code: C
) =>
  problem(
    identifier,
    status,
    description,
    isInstance(Class),
    Schema.Struct({ message: Message, code: Code(code) }),
    (e: E) => ({ message: e.message, code })
  )

/** An error with a `code`, answered with `status` for the `codes` listed (other codes are other schemas). */
const coded = <E extends { readonly message: string }, const Code extends string>(
  Class: ErrorClass<E>,
  codeOf: (e: E) => string,
  identifier: string,
  status: number,
  description: string,
  codes: readonly [Code, ...Array<Code>]
) => {
  const is = (u: unknown): u is E =>
    u instanceof Class && (codes as ReadonlyArray<string>).includes(codeOf(u))
  return problem(
    identifier,
    status,
    description,
    is,
    Schema.Struct({ message: Message, code: Schema.Literal(...codes) }),
    (e: E) => ({ message: e.message, code: codeOf(e) as Code })
  )
}

/** A kebab-case reason of the domain as the `code` of the body: `already-paid` is `ALREADY_PAID`. */
export const codeOfReason = (reason: string): string => reason.toUpperCase().replaceAll("-", "_")

// ---------------------------------------------------------------------------------------------------------
// Common to many endpoints.

/**
 * A field's name on the wire: core names fields as the domain does (`perChargeCap`, `priceData.amount`),
 * requests in snake_case (`per_charge_cap`, `price_data.amount`).
 */
export const wireField = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** A domain message naming a field (`must equal priceData.amount`) names it as the wire does. */
const wireText = (text: string): string =>
  text.replace(/\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+(?:\.[a-z][a-zA-Z0-9]*)*/g, wireField)

/**
 * A request HttpApi could not decode: its fields are already as sent, wire names or the unknown key the
 * client typed (`periodCap`), which must not be renamed into the field it was mistaken for.
 */
export class Undecodable extends Errors.InvalidRequest {
  static fromIssues(issues: ReadonlyArray<Errors.FieldError>): Undecodable {
    const { message, errors } = Errors.InvalidRequest.of(issues)
    return new Undecodable({ message, errors })
  }
}

export const InvalidRequest = problem(
  "InvalidRequest",
  422,
  "A field is missing, of the wrong type, unknown, or breaks a rule; `errors` lists each field",
  isInstance(Errors.InvalidRequest),
  Schema.Struct({
    message: Message,
    code: Code("VALIDATION_FAILED"),
    errors: Schema.Array(Errors.FieldError)
  }),
  (e) => {
    const code = "VALIDATION_FAILED" as const
    if (e instanceof Undecodable) return { message: e.message, code, errors: e.errors }
    const errors = e.errors.map((p) => ({ field: wireField(p.field), message: wireText(p.message) }))
    const first = errors[0]
    return { message: first === undefined ? e.message : `${first.field}: ${first.message}`, code, errors }
  }
)

/**
 * One schema for every `503`, the charge refusal of spec 7.1 included: the same body and the same advice,
 * which two alternatives of one status with one `code` could not tell apart. Its `code` is
 * `OUTCOME_UNKNOWN` for a commit whose connection was lost (`Sql/Repository.OutcomeUnknown`).
 */
export const ServiceUnavailable = problem(
  "ServiceUnavailable",
  503,
  "The service is temporarily unavailable; the same request works once it is back",
  (u): u is Errors.ServiceUnavailable | Mandates.ChargeRefused =>
    u instanceof Errors.ServiceUnavailable ||
    (u instanceof Mandates.ChargeRefused && u.code === "SERVICE_UNAVAILABLE"),
  Schema.Struct({
    message: Message,
    code: Schema.Literal("SERVICE_UNAVAILABLE", "OUTCOME_UNKNOWN").annotations({
      description:
        "`OUTCOME_UNKNOWN`: the database connection was lost while the request committed, so whether it took effect is unknown; retry with the same `Idempotency-Key` (never a new one), which returns the first result if it took effect and runs the request once if it did not"
    })
  }),
  (e) => ({
    message: e.message,
    code: e instanceof OutcomeUnknown ? ("OUTCOME_UNKNOWN" as const) : ("SERVICE_UNAVAILABLE" as const)
  })
)

export const Forbidden = plain(
  Auth.Forbidden,
  "Forbidden",
  403,
  "The key lacks the scope this endpoint needs, or is a publishable key on a secret-key endpoint",
  "FORBIDDEN"
)

export const UnauthorizedProblem = plain(
  Unauthorized,
  "Unauthorized",
  401,
  "Missing or invalid key",
  "UNAUTHORIZED"
)

export const RateLimitedProblem = plain(
  RateLimited,
  "TooManyRequests",
  429,
  "Too many requests for this key or address; retry after `Retry-After` seconds",
  "RATE_LIMITED"
)

export const NotFoundProblem = plain(NotFound, "NotFound", 404, "No such resource", "NOT_FOUND")

export const ConflictProblem = plain(
  Conflict,
  "Conflict",
  409,
  "Another resource already holds this value",
  "VALUE_TAKEN"
)

export const MalformedBodyProblem = plain(
  MalformedBody,
  "MalformedBody",
  400,
  "The body is not valid JSON, could not be read, or nests deeper than 64 levels",
  "MALFORMED_BODY"
)

export const BodyTooLargeProblem = plain(
  BodyTooLarge,
  "BodyTooLarge",
  413,
  "The body is larger than the service accepts (1 MiB unless configured)",
  "BODY_TOO_LARGE"
)

export const UnsupportedMediaTypeProblem = plain(
  UnsupportedMediaType,
  "UnsupportedMediaType",
  415,
  "The body is not `application/json`",
  "UNSUPPORTED_MEDIA_TYPE"
)

export const IdempotencyKeyInFlight = plain(
  Idempotency.KeyInFlight,
  "IdempotencyKeyInFlight",
  409,
  "A request with this `Idempotency-Key` is still running; retry it later",
  "REQUEST_IN_PROGRESS"
)

export const IdempotencyKeyReused = plain(
  Idempotency.KeyReused,
  "IdempotencyKeyReused",
  422,
  "This `Idempotency-Key` was already used with another request body",
  "IDEMPOTENCY_KEY_REUSED"
)

export const DuplicateReference = problem(
  "DuplicateReference",
  409,
  "The reference is already in use",
  isInstance(Store.DuplicateReference),
  Schema.Struct({ message: Message, code: Code("REFERENCE_TAKEN") }),
  (e) => ({ message: `The reference ${e.reference} is already in use`, code: "REFERENCE_TAKEN" as const })
)

// ---------------------------------------------------------------------------------------------------------
// Mandates (spec 7.1, 7.2).

const refusal = <const Code extends Mandate.RefusalCode>(
  status: number,
  description: string,
  codes: readonly [Code, ...Array<Code>]
) => coded(Mandates.ChargeRefused, (e) => e.code, `ChargeRefused${status}`, status, description, codes)

/** The charge refusals of spec 7.1, one schema per status. */
export const ChargeRefused = {
  NotFound: refusal(404, "No mandate with that id or reference", ["MANDATE_NOT_FOUND"]),
  Conflict: refusal(409, "The mandate is not active, or has expired", [
    "MANDATE_INACTIVE",
    "MANDATE_EXPIRED"
  ]),
  Unprocessable: refusal(422, "The charge breaks a cap or was refused by the wallet", [
    "PER_CHARGE_CAP_EXCEEDED",
    "PERIOD_CAP_EXCEEDED",
    "MANDATE_CHARGE_AMOUNT_INVALID",
    "WALLET_LIMIT_EXCEEDED",
    "MANDATE_CHARGE_FAILED"
  ]),
  PaymentRequired: refusal(402, "The wallet cannot cover the charge now", ["INSUFFICIENT_FUNDS"]),
  /** Retry with the same key; the schema every `503` shares. */
  Unavailable: ServiceUnavailable
}

export const MandateNotFound = plain(
  Mandates.MandateNotFound,
  "MandateNotFound",
  404,
  "Mandate not found",
  "MANDATE_NOT_FOUND"
)
/**
 * The spec fixes no words for this `403`, so the message says how an operator turns the feature on (the
 * merchant reading it cannot, and would otherwise have to ask what to ask for).
 */
export const MandatesNotEnabled = problem(
  "MandatesNotEnabled",
  403,
  "A live key before mandates are enabled for the merchant",
  isInstance(Mandates.MandatesNotEnabled),
  Schema.Struct({ message: Message, code: Code("MANDATES_NOT_ENABLED") }),
  (e) => {
    const id = e.merchantId ?? "{merchant_id}"
    return {
      message: `${e.message}. An operator enables them with POST /ops/merchants/${id}/features {"mandates_live": true}, or pnpm laari merchants features --merchant ${id} --mandates-live true`,
      code: "MANDATES_NOT_ENABLED" as const
    }
  }
)
export const MandateNotRevocable = plain(
  Mandates.MandateNotRevocable,
  "MandateNotRevocable",
  409,
  "The mandate cannot be revoked in its state",
  "MANDATE_NOT_REVOCABLE"
)
export const MandateReferenceTaken = plain(
  Mandates.MandateReferenceTaken,
  "MandateReferenceTaken",
  409,
  "A mandate with this reference already exists",
  "REFERENCE_TAKEN"
)
export const MandateNotPending = plain(
  Mandates.MandateNotPending,
  "MandateNotPending",
  409,
  "The mandate is not waiting for the customer's approval",
  "MANDATE_NOT_PENDING"
)
export const MandateNotSuspendable = plain(
  Mandates.MandateNotSuspendable,
  "MandateNotSuspendable",
  409,
  "Only an active mandate can be suspended",
  "MANDATE_NOT_SUSPENDABLE"
)
export const CustomerNotFound = plain(
  Mandates.CustomerNotFound,
  "CustomerNotFound",
  404,
  "No wallet is registered to this phone number",
  "CUSTOMER_NOT_FOUND"
)

// ---------------------------------------------------------------------------------------------------------
// Approvals (one-time codes).

export const ChallengeNotFound = plain(
  Approvals.ChallengeNotFound,
  "ChallengeNotFound",
  404,
  "No such approval in progress",
  "CHALLENGE_NOT_FOUND"
)

const approvalRefusal = <const Code extends string>(
  status: number,
  description: string,
  codes: readonly [Code, ...Array<Code>]
) =>
  coded(
    Approvals.ApprovalRefused,
    (e) => codeOfReason(e.reason),
    `ApprovalRefused${status}`,
    status,
    description,
    codes
  )

export const ApprovalRefused = {
  Unprocessable: approvalRefusal(422, "The code is incorrect, used or expired", [
    "INCORRECT",
    "USED",
    "EXPIRED"
  ]),
  Locked: approvalRefusal(429, "Too many incorrect codes for this approval", ["LOCKED"])
}

/** `TOO_MANY_CODES` for one mandate or session, `..._FOR_PHONE` across a phone's approvals. */
export const approvalLimitCode = (e: Pick<Approvals.ApprovalLimited, "limit" | "scope">) =>
  `TOO_MANY_${e.limit === "codes" ? "CODES" : "GUESSES"}${e.scope === "customer" ? "_FOR_PHONE" : ""}`

export const ApprovalLimited = coded(
  Approvals.ApprovalLimited,
  approvalLimitCode,
  "ApprovalLimited",
  429,
  "Too many codes sent or wrong codes tried for this approval or phone; retry after `Retry-After` seconds",
  ["TOO_MANY_CODES", "TOO_MANY_CODES_FOR_PHONE", "TOO_MANY_GUESSES", "TOO_MANY_GUESSES_FOR_PHONE"]
)

// ---------------------------------------------------------------------------------------------------------
// QR codes (spec 7.3).

export const QrCodeNotFound = plain(
  QrCodes.QrCodeNotFound,
  "QrCodeNotFound",
  404,
  "QR code not found",
  "QR_CODE_NOT_FOUND"
)
export const OutletNotFound = plain(
  QrCodes.OutletNotFound,
  "OutletNotFound",
  404,
  "`outlet_id` is unknown or another merchant's",
  "OUTLET_NOT_FOUND"
)
export const QrReferenceTaken = plain(
  QrCodes.QrReferenceTaken,
  "QrReferenceTaken",
  409,
  "A QR code with this reference already exists",
  "REFERENCE_TAKEN"
)
export const QrCodeAlreadyInactive = plain(
  QrCodes.QrCodeAlreadyInactive,
  "QrCodeAlreadyInactive",
  400,
  "The QR code is already deactivated",
  "QR_CODE_ALREADY_INACTIVE"
)
export const QrPayloadInvalid = plain(
  QrCodes.QrPayloadInvalid,
  "QrPayloadInvalid",
  422,
  "The payload does not parse or fails its checksum",
  "QR_PAYLOAD_INVALID"
)

const qrRefusal = <const Code extends string>(
  status: number,
  description: string,
  codes: readonly [Code, ...Array<Code>]
) =>
  coded(
    QrCodes.QrPaymentRefused,
    (e) => codeOfReason(e.reason),
    `QrPaymentRefused${status}`,
    status,
    description,
    codes
  )

export const QrPaymentRefused = {
  Conflict: qrRefusal(409, "The code is inactive, expired or already paid", [
    "INACTIVE",
    "EXPIRED",
    "ALREADY_PAID"
  ]),
  Unprocessable: qrRefusal(422, "The payment does not match the code", [
    "PAYLOAD_MISMATCH",
    "AMOUNT_MISMATCH",
    "AMOUNT_REQUIRED"
  ])
}

/** The wallet's refusals of a payment, shared by QR payments and checkout. */
const declined = <E extends { readonly message: string; readonly reason: string }>(
  Class: ErrorClass<E>,
  name: string
) => ({
  PaymentRequired: coded(
    Class,
    (e) => codeOfReason(e.reason),
    `${name}402`,
    402,
    "The wallet cannot cover the payment",
    ["INSUFFICIENT_BALANCE"]
  ),
  Unprocessable: coded(
    Class,
    (e) => codeOfReason(e.reason),
    `${name}422`,
    422,
    "The wallet refused the payment: a limit, a frozen wallet, a rule, or an error",
    ["WALLET_LIMIT", "WALLET_FROZEN", "BLOCKED_BY_RULES", "EXECUTOR_ERROR"]
  )
})

export const QrPaymentDeclined = declined(QrCodes.QrPaymentDeclined, "QrPaymentDeclined")

// ---------------------------------------------------------------------------------------------------------
// Checkout and subscriptions (spec 7.4).

export const CheckoutSessionNotFound = plain(
  Checkout.CheckoutSessionNotFound,
  "CheckoutSessionNotFound",
  404,
  "Checkout session not found",
  "CHECKOUT_SESSION_NOT_FOUND"
)
export const PayerNotFound = plain(
  Checkout.PayerNotFound,
  "PayerNotFound",
  404,
  "No wallet is registered to this phone number",
  "PAYER_NOT_FOUND"
)
export const SubscriptionsNotEnabled = plain(
  Checkout.SubscriptionsNotEnabled,
  "SubscriptionsNotEnabled",
  403,
  "A live key before subscriptions are enabled for the merchant",
  "SUBSCRIPTIONS_NOT_ENABLED"
)
export const CheckoutReferenceTaken = plain(
  Checkout.CheckoutReferenceTaken,
  "CheckoutReferenceTaken",
  409,
  "A checkout session with this reference already exists",
  "REFERENCE_TAKEN"
)
export const CheckoutSessionClosed = coded(
  Checkout.CheckoutSessionClosed,
  (e) => codeOfReason(e.reason),
  "CheckoutSessionClosed",
  409,
  "The session is already paid, expired or cancelled, or cannot be completed this way",
  ["ALREADY_COMPLETE", "EXPIRED", "CANCELLED", "MODE_MISMATCH"]
)
export const CheckoutPaymentDeclined = declined(Checkout.CheckoutPaymentDeclined, "CheckoutPaymentDeclined")

export const SubscriptionNotFound = plain(
  Subscriptions.SubscriptionNotFound,
  "SubscriptionNotFound",
  404,
  "Subscription not found",
  "SUBSCRIPTION_NOT_FOUND"
)
export const SubscriptionNotCancellable = plain(
  Subscriptions.SubscriptionNotCancellable,
  "SubscriptionNotCancellable",
  409,
  "Subscription cannot be cancelled",
  "SUBSCRIPTION_NOT_CANCELLABLE"
)

export const WebhookEndpointNotFound = plain(
  Webhook.WebhookEndpointNotFound,
  "WebhookEndpointNotFound",
  404,
  "Webhook endpoint not found",
  "WEBHOOK_ENDPOINT_NOT_FOUND"
)
export const EventNotFound = plain(
  Webhook.EventNotFound,
  "EventNotFound",
  404,
  "Event not found",
  "EVENT_NOT_FOUND"
)
export const WebhookEndpointLimitReached = coded(
  Webhook.EndpointLimitReached,
  () => "WEBHOOK_ENDPOINT_LIMIT_REACHED",
  "WebhookEndpointLimitReached",
  409,
  `The merchant already has ${Webhook.MaxEndpoints} webhook endpoints in this environment; delete one first`,
  ["WEBHOOK_ENDPOINT_LIMIT_REACHED"]
)

// ---------------------------------------------------------------------------------------------------------
// Refunds (issue 26).

export const RefundNotFound = plain(
  Refunds.RefundNotFound,
  "RefundNotFound",
  404,
  "Refund not found",
  "REFUND_NOT_FOUND"
)
export const PaymentNotFound = coded(
  Refunds.PaymentNotFound,
  (e) => `${e.kind.toUpperCase()}_NOT_FOUND`,
  "PaymentNotFound",
  404,
  "No charge, QR payment or invoice of the merchant in this environment with that id",
  ["CHARGE_NOT_FOUND", "QR_PAYMENT_NOT_FOUND", "INVOICE_NOT_FOUND"]
)
export const PaymentReferenceAmbiguous = plain(
  Refunds.PaymentReferenceAmbiguous,
  "PaymentReferenceAmbiguous",
  409,
  "Several of the merchant's charges (or QR payments) carry that reference: name the one to refund by its id",
  "PAYMENT_REFERENCE_AMBIGUOUS"
)
export const RefundReferenceTaken = plain(
  Refunds.RefundReferenceTaken,
  "RefundReferenceTaken",
  409,
  "A refund with this reference already exists",
  "REFERENCE_TAKEN"
)

const refundRefusal = <const Code extends string>(
  status: number,
  description: string,
  codes: readonly [Code, ...Array<Code>]
) => coded(Refunds.RefundRefused, (e) => e.code, `RefundRefused${status}`, status, description, codes)

/** A refused refund moves nothing; one schema per status. */
export const RefundRefused = {
  Conflict: refundRefusal(409, "The payment is not settled, or has been refunded in full", [
    "PAYMENT_NOT_REFUNDABLE",
    "PAYMENT_ALREADY_REFUNDED"
  ]),
  Unprocessable: refundRefusal(422, "The amount is more than remains to be refunded, or not an amount", [
    "REFUND_EXCEEDS_PAYMENT",
    "REFUND_AMOUNT_INVALID"
  ]),
  PaymentRequired: refundRefusal(402, "The merchant's balance cannot cover the refund now", [
    "INSUFFICIENT_MERCHANT_BALANCE"
  ])
}

// ---------------------------------------------------------------------------------------------------------
// Endpoints.

/**
 * A `POST` endpoint. Its body is checked before HttpApi decodes it (`Middleware`), which can refuse it
 * as `400` or `415`; `413` can answer any request and is listed on the whole API.
 */
export const post = <const Name extends string>(name: Name, path: `/${string}`) =>
  HttpApiEndpoint.post(name, path).addError(MalformedBodyProblem).addError(UnsupportedMediaTypeProblem)
