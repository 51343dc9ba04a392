/**
 * Errors shared by every capability. Each carries the text a client sees; HTTP statuses are attached in
 * the server.
 */
import { Schema } from "effect"

/** The database (or another dependency) cannot be reached. The same request works once it is back. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  message: Schema.optionalWith(Schema.String, { default: () => "This service is temporarily unavailable" }),
  cause: Schema.optional(Schema.Defect)
}) {}

export const FieldError = Schema.Struct({ field: Schema.String, message: Schema.String })
export type FieldError = typeof FieldError.Type

/** A request that breaks a rule of the spec (422). */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  errors: Schema.Array(FieldError)
}) {
  static field(field: string, message: string): InvalidRequest {
    return InvalidRequest.of([{ field, message }])
  }

  /** The problems, the first one also as the message (`field: message`). */
  static of(errors: ReadonlyArray<FieldError>): InvalidRequest {
    const first = errors[0]
    return new InvalidRequest({
      message: first === undefined ? "Invalid request" : `${first.field}: ${first.message}`,
      errors
    })
  }
}
