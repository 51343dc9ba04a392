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

/**
 * The connection to the database was lost during COMMIT: the transaction may have committed or not, and no
 * one can tell this request which. Still `ServiceUnavailable` to every caller, with a message that says to
 * retry with the same `Idempotency-Key`: the key was claimed in that same transaction, so the retry replays
 * the stored answer if it committed and runs the command once if it did not. A retry with a new key could
 * do it twice. Any store whose commit can be cut off raises it; the server answers `OUTCOME_UNKNOWN`.
 */
export class OutcomeUnknown extends ServiceUnavailable {
  static of(cause: unknown): OutcomeUnknown {
    return new OutcomeUnknown({
      message:
        "The connection to the database was lost while this request was being committed, so whether it took effect is unknown. Retry it with the same Idempotency-Key: the retry returns the first result if it took effect, and runs it once if it did not. Do not retry with a new key",
      cause
    })
  }
}

/**
 * A payment sent to the wallet provider's core got no answer in time (a timeout, a reset, a `5xx`): the
 * movement is committed pending in laari and the resolver is finding out, so the outcome is settled within
 * minutes either way. Answered like a lost commit: retry with the same Idempotency-Key, which answers the
 * settled outcome once it is known and never moves the money twice.
 */
export class PaymentOutcomeUnknown extends OutcomeUnknown {
  /** What the merchant is told: the same words whichever payment it was. */
  static readonly paymentMessage =
    "The wallet provider did not answer in time, so whether this payment went through is not known yet; laari is finding out and settles it within minutes. Retry with the same Idempotency-Key: the retry answers the outcome once it is known and never pays twice. Do not retry with a new key"

  static forPayment(): PaymentOutcomeUnknown {
    return new PaymentOutcomeUnknown({ message: PaymentOutcomeUnknown.paymentMessage })
  }
}

/** The wallet provider's core has failed repeatedly: new payments are refused at once until it answers again. */
export const walletUnavailable = (): ServiceUnavailable =>
  new ServiceUnavailable({
    message:
      "The wallet provider is not answering, so no payment can be taken right now; nothing was charged. Retry shortly"
  })

export const FieldError = Schema.Struct({
  field: Schema.String.annotations({
    description: "The request field, named as sent (`price_data.amount`)"
  }),
  message: Schema.String.annotations({ description: "What is wrong with it" })
}).annotations({ description: "One field's problem" })
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
