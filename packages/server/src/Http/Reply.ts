/**
 * What a handler answers: a status and a JSON body. Every error of the domain is turned into one here,
 * the single place where statuses are attached (DESIGN section 9).
 */
import { Approvals, Checkout, Errors, Mandate, Mandates, QrCodes, Subscriptions } from "@laari/core"
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"

export interface Reply {
  readonly status: number
  readonly body: unknown
  /**
   * Headers of its own (`Retry-After` of a `429`). Not named `headers`: a stored idempotent response
   * is told apart from a `Reply` by having `headers`.
   */
  readonly extraHeaders?: Record<string, string> | undefined
}

export const reply = (status: number, body: unknown): Reply => ({ status, body })

export const message = (status: number, text: string, extra?: Record<string, unknown>): Reply =>
  reply(status, { message: text, ...extra })

/** A JSON response from its already serialized body (replays send the stored bytes as they are). */
export const rawResponse = (
  status: number,
  body: string,
  headers?: Record<string, string>
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, {
    status,
    contentType: "application/json",
    ...(headers === undefined ? {} : { headers })
  })

export const toResponse = (
  r: Reply,
  headers?: Record<string, string>
): HttpServerResponse.HttpServerResponse =>
  rawResponse(
    r.status,
    JSON.stringify(r.body),
    r.extraHeaders === undefined ? headers : { ...r.extraHeaders, ...headers }
  )

/** Statuses of the charge refusals of spec 7.1. */
export const refusalStatus: Record<Mandate.RefusalCode, number> = {
  MANDATE_NOT_FOUND: 404,
  MANDATE_INACTIVE: 409,
  MANDATE_EXPIRED: 409,
  PER_CHARGE_CAP_EXCEEDED: 422,
  PERIOD_CAP_EXCEEDED: 422,
  MANDATE_CHARGE_AMOUNT_INVALID: 422,
  WALLET_LIMIT_EXCEEDED: 422,
  MANDATE_CHARGE_FAILED: 422,
  INSUFFICIENT_FUNDS: 402,
  SERVICE_UNAVAILABLE: 503
}

export type DomainError =
  | Mandates.MandateError
  | QrCodes.QrCodeError
  | Checkout.CheckoutSessionNotFound
  | Checkout.SubscriptionsNotEnabled
  | Checkout.CheckoutReferenceTaken
  | Checkout.CheckoutSessionClosed
  | Checkout.CheckoutPaymentDeclined
  | Checkout.PayerNotFound
  | Subscriptions.SubscriptionNotFound
  | Subscriptions.SubscriptionNotCancellable
  | Approvals.ChallengeNotFound
  | Approvals.ApprovalRefused
  | Approvals.ApprovalLimited
  | Errors.InvalidRequest
  | Errors.ServiceUnavailable

/** The reply for any error the domain can end a command with. */
export const fromError = (e: DomainError): Reply => {
  switch (e._tag) {
    case "ChargeRefused":
      return message(refusalStatus[e.code], e.message, { code: e.code })
    case "InvalidRequest":
      return message(422, e.message, { errors: e.errors })
    case "ServiceUnavailable":
      return message(503, e.message, { code: "SERVICE_UNAVAILABLE" })
    case "MandateNotFound":
    case "CustomerNotFound":
    case "ChallengeNotFound":
      return message(404, e.message)
    case "MandatesNotEnabled":
      return message(403, e.message)
    case "MandateNotRevocable":
    case "MandateReferenceTaken":
    case "MandateNotPending":
    case "MandateNotSuspendable":
      return message(409, e.message)
    case "DuplicateReference":
      return message(409, `The reference ${e.reference} is already in use`)
    case "ApprovalRefused":
      return message(e.reason === "locked" ? 429 : 422, e.message)
    case "ApprovalLimited":
      return {
        ...message(429, e.message, { limit: e.limit, scope: e.scope }),
        extraHeaders: { "retry-after": String(e.retryAfterSeconds) }
      }
    case "QrCodeNotFound":
    case "OutletNotFound":
      return message(404, e.message)
    case "QrReferenceTaken":
      return message(409, e.message)
    case "QrCodeAlreadyInactive":
      return message(400, e.message)
    case "QrPayloadInvalid":
      return message(422, e.message)
    case "QrPaymentRefused":
      return message(
        e.reason === "inactive" || e.reason === "expired" || e.reason === "already-paid" ? 409 : 422,
        e.message,
        { reason: e.reason }
      )
    case "CheckoutSessionNotFound":
    case "PayerNotFound":
    case "SubscriptionNotFound":
      return message(404, e.message)
    case "SubscriptionsNotEnabled":
      return message(403, e.message)
    case "CheckoutReferenceTaken":
    case "SubscriptionNotCancellable":
      return message(409, e.message)
    case "CheckoutSessionClosed":
      return message(409, e.message, { reason: e.reason })
    case "CheckoutPaymentDeclined":
    case "QrPaymentDeclined":
      return message(e.reason === "insufficient-balance" ? 402 : 422, e.message, { reason: e.reason })
  }
}

/** Runs a command and answers with `ok` on success or the error's reply. */
export const run = <A, R>(
  effect: Effect.Effect<A, DomainError, R>,
  ok: (a: A) => Reply
): Effect.Effect<Reply, never, R> => Effect.match(effect, { onFailure: fromError, onSuccess: ok })

/** Runs a command and responds with `ok` on success or the error's reply. */
export const respond = <A, R>(
  effect: Effect.Effect<A, DomainError, R>,
  ok: (a: A) => Reply
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
  Effect.map(run(effect, ok), (r) => toResponse(r))
