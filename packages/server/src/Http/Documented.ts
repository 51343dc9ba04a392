/**
 * Error bodies as the OpenAPI description shows them. Handlers answer errors through `Reply`; these
 * schemas only document them. HttpApi encodes a failure with the first error schema that accepts it,
 * so they must accept nothing, or a stray defect carrying a `message` would be answered as one.
 */
import { HttpApiSchema } from "@effect/platform"
import { Errors } from "@laari/core"
import { Schema } from "effect"

const fields = {
  message: Schema.String,
  code: Schema.optional(Schema.String),
  errors: Schema.optional(Schema.Array(Errors.FieldError))
}

/** A body that documents an error status and matches no value at runtime (its filter always fails). */
const documented = (status: number, description: string, identifier: string) =>
  Schema.Struct(fields)
    .pipe(Schema.filter(() => false, { jsonSchema: {} }))
    .annotations({
      identifier: `Error${status}`,
      title: identifier,
      ...HttpApiSchema.annotations({ status, description })
    })

export const BadRequest = documented(
  400,
  "The body is not JSON, or the request is not allowed in this state",
  "BadRequest"
)
export const PaymentRequired = documented(402, "Insufficient funds", "PaymentRequired")
export const Forbidden = documented(
  403,
  "The key lacks the scope, or the feature is not enabled",
  "Forbidden"
)
export const NotFound = documented(404, "No such resource for this merchant in this environment", "NotFound")
export const Conflict = documented(
  409,
  "Not allowed in the resource's state, or a request with this Idempotency-Key is running",
  "Conflict"
)
export const Unprocessable = documented(422, "A field breaks a rule; `errors` lists them", "Unprocessable")
export const TooManyAttempts = documented(429, "Too many incorrect codes", "TooManyAttempts")
export const Unavailable = documented(503, "This service is temporarily unavailable; retry", "Unavailable")

/** Headers every mutating request may carry. */
export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String).annotations({
    description: "A retry with the same key replays the first response (with `Idempotent-Replay: true`)."
  })
})
