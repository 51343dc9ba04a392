/**
 * The one table of the API's error answers, and the lookup that answers an error outside HttpApi's own
 * encoding: idempotent replays (`Idempotent`), the body checks (`Middleware`), the edge's refusals
 * (`Edge`), `/metrics` and GraphQL. The table is a constant, combined here from `Problems` and
 * `DomainProblems`; an error's schemas are found by its `_tag`, and the schemas of one tag (a refusal's,
 * one per status) accept disjoint codes, so at most one answers it.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Option, Schema } from "effect"
import * as DomainProblems from "./DomainProblems.js"
import * as Problem from "./Problem.js"
import * as Problems from "./Problems.js"

/** Every error schema of the API, each once. */
export const table: ReadonlyArray<Schema.Schema.AnyNoContext> = [
  // The edge's and the common ones.
  Problems.InvalidRequest,
  Problems.ServiceUnavailable,
  Problems.Forbidden,
  Problems.UnauthorizedProblem,
  Problems.RateLimitedProblem,
  Problems.NotFoundProblem,
  Problems.ConflictProblem,
  Problems.MalformedBodyProblem,
  Problems.BodyTooLargeProblem,
  Problems.UnsupportedMediaTypeProblem,
  Problems.IdempotencyKeyInFlight,
  Problems.IdempotencyKeyReused,
  Problems.DuplicateReference,
  // Mandates (`ChargeRefused.Unavailable` is `ServiceUnavailable`, above).
  DomainProblems.ChargeRefused.NotFound,
  DomainProblems.ChargeRefused.Conflict,
  DomainProblems.ChargeRefused.Unprocessable,
  DomainProblems.ChargeRefused.PaymentRequired,
  DomainProblems.MandateNotFound,
  DomainProblems.MandatesNotEnabled,
  DomainProblems.MandateNotRevocable,
  DomainProblems.MandateReferenceTaken,
  DomainProblems.MandateNotPending,
  DomainProblems.MandateNotSuspendable,
  DomainProblems.CustomerNotFound,
  // Approvals.
  DomainProblems.ChallengeNotFound,
  DomainProblems.ApprovalRefused.Unprocessable,
  DomainProblems.ApprovalRefused.Locked,
  DomainProblems.ApprovalLimited,
  // QR codes.
  DomainProblems.QrCodeNotFound,
  DomainProblems.OutletNotFound,
  DomainProblems.QrReferenceTaken,
  DomainProblems.QrCodeAlreadyInactive,
  DomainProblems.QrPayloadInvalid,
  DomainProblems.QrPaymentRefused.Conflict,
  DomainProblems.QrPaymentRefused.Unprocessable,
  DomainProblems.QrPaymentDeclined.PaymentRequired,
  DomainProblems.QrPaymentDeclined.Unprocessable,
  // Checkout, subscriptions, webhooks.
  DomainProblems.CheckoutSessionNotFound,
  DomainProblems.PayerNotFound,
  DomainProblems.SubscriptionsNotEnabled,
  DomainProblems.CheckoutReferenceTaken,
  DomainProblems.CheckoutSessionClosed,
  DomainProblems.CheckoutPaymentDeclined.PaymentRequired,
  DomainProblems.CheckoutPaymentDeclined.Unprocessable,
  DomainProblems.SubscriptionNotFound,
  DomainProblems.SubscriptionNotCancellable,
  DomainProblems.WebhookEndpointNotFound,
  DomainProblems.EventNotFound,
  DomainProblems.WebhookEndpointLimitReached,
  // Refunds and the balance.
  DomainProblems.RefundNotFound,
  DomainProblems.PaymentNotFound,
  DomainProblems.PaymentReferenceAmbiguous,
  DomainProblems.RefundReferenceTaken,
  DomainProblems.RefundRefused.Conflict,
  DomainProblems.RefundRefused.Unprocessable,
  DomainProblems.RefundRefused.PaymentRequired,
  DomainProblems.BalanceTransactionNotFound,
  DomainProblems.InvalidReportDate,
  // Reconciliation (operator API).
  DomainProblems.ReconciliationConnectorOff,
  DomainProblems.ReconciliationRunInProgress
]

/** The status and body an error is answered with. */
export interface Answer {
  readonly status: number
  readonly body: unknown
}

interface Entry {
  readonly identifier: string
  readonly status: number
  readonly encode: (u: unknown) => Option.Option<unknown>
}

const entryOf = (schema: Schema.Schema.AnyNoContext): Entry => ({
  identifier: String(schema.ast.annotations.identifier),
  status: HttpApiSchema.getStatusError(schema),
  encode: Schema.encodeUnknownOption(schema)
})

/** The table's schemas by the tags of the errors they answer. */
export const byTag: ReadonlyMap<string, ReadonlyArray<Entry>> = new Map(
  Array.from(new Set(table.flatMap(Problem.tagsOf)), (tag) => [
    tag,
    table.filter((schema) => Problem.tagsOf(schema).includes(tag)).map(entryOf)
  ])
)

const tagOf = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "_tag" in e && typeof e._tag === "string" ? e._tag : undefined

/**
 * The status and body an error is answered with: what HttpApi sends for it, computed by the same schema.
 * Used where the answer is stored (idempotent replays) or sent outside HttpApi (the body checks).
 */
export const answer = (e: unknown): Answer | undefined => {
  const tag = tagOf(e)
  const entries = tag === undefined ? undefined : byTag.get(tag)
  if (entries === undefined) return undefined
  const found = entries.flatMap((entry) =>
    Option.match(entry.encode(e), {
      onNone: () => [],
      onSome: (body) => [{ identifier: entry.identifier, status: entry.status, body }]
    })
  )
  // Two schemas answering one error would make its status depend on their order: a mistake in the table.
  if (found.length > 1)
    throw new Error(`Several error schemas accept ${String(e)}: ${found.map((f) => f.identifier).join(", ")}`)
  const [only] = found
  return only === undefined ? undefined : { status: only.status, body: only.body }
}

/** The response for an error of the table; an error none of its schemas accepts is a defect. */
export const respond = (e: unknown): HttpServerResponse.HttpServerResponse => {
  const found = answer(e)
  if (found === undefined) throw new Error(`No error schema accepts ${String(e)}`)
  return HttpServerResponse.unsafeJson(found.body, { status: found.status })
}
