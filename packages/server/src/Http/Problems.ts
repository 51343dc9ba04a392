/**
 * The errors only the HTTP edge has, and the answers common to many endpoints: invalid requests, the
 * `503`, authentication, rate limits, bodies, idempotency keys. Each feature's own errors are answered in
 * its folder's `Problems.ts`; how a schema is made is `Problem`'s.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import { Auth, Errors, Idempotency, Mandates, Store } from "@laari/core"
import { Schema } from "effect"
import { RateLimited } from "../Platform/RateLimits.js"
import * as Problem from "./Problem.js"

/**
 * `401` for a missing, unknown or revoked key, or a wrong operator token. Each says what to send instead:
 * the `code` stays `UNAUTHORIZED`, the words tell a missing header from a wrong scheme from a bad key.
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}) {
  static readonly noKey = new Unauthorized({
    message: "No API key: send your secret key in the header `Authorization: Bearer sk_test_...`"
  })
  static readonly notBearer = new Unauthorized({
    message:
      "The Authorization header must be `Bearer ` followed by your key (`Authorization: Bearer sk_test_...`), or HTTP Basic with the key as the user name"
  })
  static readonly emptyBearer = new Unauthorized({
    message: "No key after `Bearer`: send `Authorization: Bearer sk_test_...`"
  })
  static readonly basicWithoutKey = new Unauthorized({
    message:
      "HTTP Basic takes the key as the user name and no password (`curl -u sk_test_...:`); send it so, or as `Authorization: Bearer sk_test_...`"
  })
  static readonly invalidKey = new Unauthorized({
    message:
      "Invalid API key: no key of any account is this one; send a whole key as issued (it begins `sk_test_`, `sk_live_`, `pk_test_` or `pk_live_`)"
  })
  static readonly revokedKey = new Unauthorized({
    message: "This API key was revoked: send another of the account's keys, or have a new one issued"
  })
  /** An access token (`lat_...`) told apart from a key: a client then knows to request a new one. */
  static readonly invalidToken = new Unauthorized({
    message: "Invalid access token: it has expired or was revoked; request a new one at POST /oauth/token"
  })
}

/** `429` past a rate limit: the rate limits' port's refusal (`Platform/RateLimits`). */
export { RateLimited }

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
// Common to many endpoints.

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

export const InvalidRequest = Problem.problem(
  "InvalidRequest",
  422,
  "A field is missing, of the wrong type, unknown, or breaks a rule; `errors` lists each field",
  [Errors.InvalidRequest._tag],
  Problem.isInstance(Errors.InvalidRequest),
  Schema.Struct({
    message: Problem.Message,
    code: Problem.Code("VALIDATION_FAILED"),
    errors: Schema.Array(Errors.FieldError).annotations({ description: "Each field's problem" })
  }),
  (e) => {
    const code = "VALIDATION_FAILED" as const
    if (e instanceof Undecodable) return { message: e.message, code, errors: e.errors }
    const errors = e.errors.map((p) => ({
      field: Problem.wireField(p.field),
      message: Problem.wireText(p.message)
    }))
    const first = errors[0]
    return { message: first === undefined ? e.message : `${first.field}: ${first.message}`, code, errors }
  }
)

/**
 * One schema for every `503`, the charge refusal `SERVICE_UNAVAILABLE` included: the same body and the
 * same advice, which two alternatives of one status with one `code` could not tell apart. Its `code` is
 * `OUTCOME_UNKNOWN` for an outcome not known yet (`Errors.OutcomeUnknown`): a commit whose connection was lost,
 * or a payment the wallet provider's core has not answered.
 */
export const ServiceUnavailable = Problem.problem(
  "ServiceUnavailable",
  503,
  "The service is temporarily unavailable; the same request works once it is back",
  [Errors.ServiceUnavailable._tag, Mandates.ChargeRefused._tag],
  (u): u is Errors.ServiceUnavailable | Mandates.ChargeRefused =>
    u instanceof Errors.ServiceUnavailable ||
    (u instanceof Mandates.ChargeRefused && u.code === "SERVICE_UNAVAILABLE"),
  Schema.Struct({
    message: Problem.Message,
    code: Schema.Literal("SERVICE_UNAVAILABLE", "OUTCOME_UNKNOWN").annotations({
      description:
        "`OUTCOME_UNKNOWN`: whether the request took effect is not known yet (the database connection was lost while it committed, or the wallet provider's core has not answered a payment sent to it, which laari then settles by asking the core, within minutes); retry with the same `Idempotency-Key` (never a new one), which returns the first result once it is known and runs the request once if it did not take effect"
    })
  }),
  (e) => ({
    message: e.message,
    code: e instanceof Errors.OutcomeUnknown ? ("OUTCOME_UNKNOWN" as const) : ("SERVICE_UNAVAILABLE" as const)
  })
)

export const Forbidden = Problem.plain(
  Auth.Forbidden,
  "Forbidden",
  403,
  "The key lacks the scope this endpoint needs, or is a publishable key on a secret-key endpoint",
  "FORBIDDEN"
)

export const UnauthorizedProblem = Problem.plain(
  Unauthorized,
  "Unauthorized",
  401,
  "Missing or invalid key: `message` says which (no `Authorization` header, another scheme than `Bearer`, an unknown key, a revoked one) and what to send",
  "UNAUTHORIZED"
)

export const RateLimitedProblem = Problem.plain(
  RateLimited,
  "TooManyRequests",
  429,
  "Too many requests for this key or address; retry after `Retry-After` seconds",
  "RATE_LIMITED"
)

export const NotFoundProblem = Problem.plain(NotFound, "NotFound", 404, "No such resource", "NOT_FOUND")

export const ConflictProblem = Problem.plain(
  Conflict,
  "Conflict",
  409,
  "Another resource already holds this value",
  "VALUE_TAKEN"
)

export const MalformedBodyProblem = Problem.plain(
  MalformedBody,
  "MalformedBody",
  400,
  "The body is not valid JSON, could not be read, or nests deeper than 64 levels",
  "MALFORMED_BODY"
)

export const BodyTooLargeProblem = Problem.plain(
  BodyTooLarge,
  "BodyTooLarge",
  413,
  "The body is larger than the service accepts (1 MiB unless configured)",
  "BODY_TOO_LARGE"
)

export const UnsupportedMediaTypeProblem = Problem.plain(
  UnsupportedMediaType,
  "UnsupportedMediaType",
  415,
  "The body is not `application/json`",
  "UNSUPPORTED_MEDIA_TYPE"
)

export const IdempotencyKeyInFlight = Problem.plain(
  Idempotency.KeyInFlight,
  "IdempotencyKeyInFlight",
  409,
  "A request with this `Idempotency-Key` is still running; retry it later",
  "REQUEST_IN_PROGRESS"
)

export const IdempotencyKeyReused = Problem.plain(
  Idempotency.KeyReused,
  "IdempotencyKeyReused",
  422,
  "This `Idempotency-Key` was already used with another request body",
  "IDEMPOTENCY_KEY_REUSED"
)

export const DuplicateReference = Problem.problem(
  "DuplicateReference",
  409,
  "The reference is already in use",
  [Store.DuplicateReference._tag],
  Problem.isInstance(Store.DuplicateReference),
  Schema.Struct({ message: Problem.Message, code: Problem.Code("REFERENCE_TAKEN") }),
  (e) => ({
    message: `The reference ${e.reference} is already in use`,
    code: "REFERENCE_TAKEN" as const
  })
)

/**
 * The refusals answered outside any one endpoint (`Answers.edge`): the body checks and unknown routes
 * (`Middleware`), the socket's own `413` and draining `503` (`Edge`), and the authentication of the
 * routes beside HttpApi (`/metrics`, GraphQL). The API lists each of them too, so the document
 * describes what the edge sends.
 */
export const edge = [
  InvalidRequest,
  ServiceUnavailable,
  UnauthorizedProblem,
  RateLimitedProblem,
  NotFoundProblem,
  MalformedBodyProblem,
  BodyTooLargeProblem,
  UnsupportedMediaTypeProblem
] as const

// ---------------------------------------------------------------------------------------------------------
// Endpoints.

/**
 * A `POST` endpoint. Its body is checked before HttpApi decodes it (`Middleware`), which can refuse it
 * as `400` or `415`; `413` can answer any request and is listed on the whole API.
 */
export const post = <const Name extends string>(name: Name, path: `/${string}`) =>
  HttpApiEndpoint.post(name, path).addError(MalformedBodyProblem).addError(UnsupportedMediaTypeProblem)
