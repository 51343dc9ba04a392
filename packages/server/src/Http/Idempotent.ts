/**
 * `Idempotency-Key` on creates, charges, revokes, deactivations and cancellations:
 * a retry replays the first response byte for byte with `Idempotent-Replay: true`.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type Auth, Errors, type Idempotency, KeyedCommands, RemoteLedger } from "@laari/core"
import { Context, Effect, Either, type ParseResult, Schema } from "effect"
import * as Keys from "../Platform/Keys.js"
import type * as Answers from "./Answers.js"
import * as Problems from "./Problems.js"

/** The headers of every endpoint that takes a key. */
export const Headers = Schema.Struct({
  "idempotency-key": Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1, { message: () => "must not be empty" }),
      // The rule's own words: the description below would otherwise be the refusal's.
      Schema.maxLength(255, { message: () => "must be at most 255 characters" })
    ).annotations({
      description:
        "Makes the request safe to retry: a retry with the same key (for 72 hours) replays the first response byte for byte, with the header `Idempotent-Replay: true`. The same key with another body is refused (`422`); while the first request runs, `409`."
    })
  )
})

/** What a replay carries besides the stored response. */
const ReplayHeader = { "idempotent-replay": "true" } as const

/**
 * A command whose outcome is settled after its transaction commits: a payment committed pending in the
 * wallet provider's core, whose call goes out once the pending movement (and the key's claim) are
 * committed. `steps` are the rest of the handler: the call, then the settlement by its answer (with the
 * answer's encoding), which commits with the answer stored under the key. A `503 OUTCOME_UNKNOWN` to
 * anything that does not know it, which is what it stands for until finished.
 */
export class Later extends Errors.PaymentOutcomeUnknown {
  constructor(
    /** The pending movement: a retry under the key asks `Resume` for its outcome. */
    readonly movementId: string,
    readonly steps: RemoteLedger.Pending<unknown, unknown>
  ) {
    super({ message: Errors.PaymentOutcomeUnknown.paymentMessage })
  }

  /** Both steps, for a request without a key. */
  get finish(): Effect.Effect<unknown, unknown> {
    return RemoteLedger.sendThenSettle(this.steps)
  }
}

/** How a keyed endpoint answers a retry whose first run was `Later`: its movement's outcome now. */
export type Resume = (movementId: string) => Effect.Effect<unknown, unknown>

/** Kept with a stored `Later` answer (never sent): the movement a retry asks about. */
const MovementHeader = "laari-pending-movement"

/** Ends the transaction without storing anything: the command failed with a `5xx`. */
class Abort<E> {
  constructor(readonly error: E) {}
}

const stored = (r: Idempotency.StoredResponse) => {
  const { [MovementHeader]: _, ...headers } = r.headers
  return HttpServerResponse.text(r.body, {
    status: r.status,
    contentType: "application/json",
    headers: { ...headers, ...ReplayHeader }
  })
}

/**
 * For a response that carries a secret: what the table keeps instead of the encoded
 * body (`store`), and what a replay sends from what was kept (`replay`), so no stored response holds one.
 */
export interface Concealed {
  readonly store: (body: unknown) => unknown
  readonly replay: (stored: string) => Effect.Effect<string, Errors.ServiceUnavailable>
}

/** How an endpoint's success is encoded, made once per endpoint rather than per request. */
interface Success {
  readonly encode: (value: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
  readonly status: number
  /**
   * The content type HttpApi would send the encoded success under as JSON, when it would (one success
   * schema, not empty): the response is then made here from the text stored, as HttpApi makes it
   * (`HttpServerResponse.json`: the JSON text under this type and status), not encoded a second time.
   */
  readonly json: string | undefined
}

const successes = new WeakMap<Schema.Schema.AnyNoContext, Success>()

const successOf = (schema: Schema.Schema.AnyNoContext): Success => {
  let success = successes.get(schema)
  if (success === undefined) {
    const encoding = HttpApiSchema.getEncoding(schema.ast)
    success = {
      encode: Schema.encodeUnknown(schema),
      status: HttpApiSchema.getStatusSuccess(schema),
      json:
        schema.ast._tag !== "Union" && !HttpApiSchema.isVoid(schema.ast) && encoding.kind === "Json"
          ? encoding.contentType
          : undefined
    }
    successes.set(schema, success)
  }
  return success
}

/**
 * Runs `command` once per key. Without a key it simply runs. `payload` is the decoded request body, whose
 * hash tells a retry from a different request under the same key.
 *
 * The claim, the command and the stored response are one transaction (core `KeyedCommands`): a duplicate
 * waits for the first request's transaction and replays it, or gets `409` past the store's bounded wait.
 * The command's value, or its error below `500`, is stored as the endpoint's schemas encode it, which is
 * what HttpApi then sends; a refusal leaves what the same request without a key leaves (the writes of a
 * transaction it failed are undone) and its stored answer. A `5xx` rolls everything back, the claim
 * included, so a retry runs again.
 */
export const idempotent = <A, E, R>(
  endpoint: {
    readonly successSchema: Schema.Schema.AnyNoContext
    /** How the endpoint's errors are answered: by the schemas it lists (`Answers.ofEndpoint`). */
    readonly answers: Answers.Answers
  },
  request: {
    readonly principal: Auth.Principal
    readonly key: string | undefined
    readonly payload: unknown
    /** What the command will lock first, announced before the claim (`Operation.Ahead`). */
    readonly ahead?: Effect.Effect<void> | undefined
    /** For a command that can end `Later`: its outcome for a retry. */
    readonly resume?: Resume | undefined
  },
  command: Effect.Effect<A, E, R>,
  concealed?: Concealed
): Effect.Effect<
  A | HttpServerResponse.HttpServerResponse,
  E | Idempotency.KeyInFlight | Idempotency.KeyReused | Errors.ServiceUnavailable,
  R | HttpServerRequest.HttpServerRequest | KeyedCommands.KeyedCommands
> =>
  Effect.gen(function* () {
    const { key, principal, payload } = request
    // Without a key, a command that ends `Later` simply finishes.
    if (key === undefined)
      return yield* Effect.catchIf(
        command,
        (e): e is E & Later => e instanceof Later,
        (later) => later.finish as Effect.Effect<A, E>
      )

    const http = yield* HttpServerRequest.HttpServerRequest
    const keyed = yield* KeyedCommands.KeyedCommands
    const scope: Idempotency.Scope = {
      merchantId: principal.merchantId,
      environment: principal.environment,
      method: http.method,
      path: new URL(http.url, "http://laari").pathname,
      key
    }
    const success = successOf(endpoint.successSchema)

    type Failure = E | Errors.ServiceUnavailable
    type Outcome = Either.Either<A | HttpServerResponse.HttpServerResponse, Failure>

    /** What a run's outcome is stored as, and answered with. */
    const encode = (outcome: Either.Either<A, Failure>) =>
      Effect.gen(function* () {
        if (Either.isLeft(outcome)) {
          const answer = endpoint.answers.answer(outcome.left)
          // A 5xx (or an error without a schema, answered as a defect) rolls everything back.
          if (answer === undefined || answer.status >= 500) return yield* Effect.fail(new Abort(outcome.left))
          return {
            response: { status: answer.status, headers: {}, body: JSON.stringify(answer.body) },
            result: outcome
          }
        }
        const body = yield* Effect.orDie(success.encode(outcome.right))
        const text = JSON.stringify(body)
        return {
          response: {
            status: success.status,
            headers: {},
            body: concealed === undefined ? text : JSON.stringify(concealed.store(body))
          },
          result:
            success.json === undefined
              ? outcome
              : Either.right(
                  HttpServerResponse.text(text, { status: success.status, contentType: success.json })
                )
        }
      })

    const answers: KeyedCommands.Answers<
      Either.Either<A, Failure>,
      Outcome,
      Abort<Failure> | Errors.ServiceUnavailable,
      never
    > = {
      ran: (outcome) =>
        Either.isLeft(outcome) && outcome.left instanceof Later
          ? // Kept until its outcome is known: what a retry meanwhile is answered, and its movement.
            Effect.succeed({
              response: {
                status: 503,
                headers: { [MovementHeader]: outcome.left.movementId },
                body: JSON.stringify(endpoint.answers.answer(outcome.left)?.body ?? {})
              },
              result: outcome
            })
          : encode(outcome),
      replayed: (response) => {
        const movementId = response.headers[MovementHeader]
        if (movementId !== undefined && request.resume !== undefined)
          return Effect.either(request.resume(movementId) as Effect.Effect<A, Failure>).pipe(
            Effect.flatMap(settled),
            Effect.catchIf(
              (e): e is Abort<Failure> => e instanceof Abort,
              (abort): Effect.Effect<Outcome> => Effect.succeed(Either.left(abort.error))
            )
          )
        return concealed === undefined
          ? Effect.succeed(Either.right(stored(response)))
          : Effect.map(concealed.replay(response.body), (body) => Either.right(stored({ ...response, body })))
      }
    }

    const fingerprint = Keys.hash(JSON.stringify(payload ?? null))

    /**
     * A `Later` outcome once known: stored in place of the pending answer and answered; still unknown
     * (a `5xx`), answered as it is, the pending answer kept for the next retry.
     */
    const settled = (outcome: Either.Either<A, Failure>) =>
      Effect.flatMap(encode(outcome), (kept) =>
        Effect.as(keyed.rewrite(scope, kept.response), kept.result as Outcome)
      )

    const aborted = <X, R2>(effect: Effect.Effect<Outcome, X | Abort<Failure>, R2>) =>
      Effect.catchIf(
        effect,
        (e): e is Abort<Failure> => e instanceof Abort,
        (abort): Effect.Effect<Outcome> => Effect.succeed(Either.left(abort.error))
      )
    const outcome: Outcome = yield* keyed
      .once({ scope, fingerprint, ahead: request.ahead }, command, answers)
      .pipe(aborted)
    // Committed pending with the key's claim: now the call, then the settlement and the answer stored in
    // place of the pending one, in one transaction. No answer (a 5xx) leaves the pending one kept.
    if (Either.isLeft(outcome) && outcome.left instanceof Later) {
      const steps = outcome.left.steps as RemoteLedger.Pending<A, Failure>
      const sent = yield* Effect.either(steps.send)
      if (Either.isLeft(sent)) return yield* Effect.fail(sent.left as unknown as Failure)
      const answered = Effect.flatMap(Effect.either(steps.settle(sent.right)), encode)
      return yield* yield* keyed
        .rewriteWith(
          scope,
          Effect.map(answered, (kept) => ({ response: kept.response, result: kept.result as Outcome }))
        )
        .pipe(aborted)
    }
    return yield* outcome
  })

/**
 * Marks an endpoint that takes an `Idempotency-Key`: `Operation.group` runs its handler through
 * `idempotent`, with the key, so no handler reads the header.
 */
export class Keyed extends Context.Tag("laari/server/Idempotent/Keyed")<Keyed, true>() {}

/** Whether `endpoint` takes an `Idempotency-Key`. */
export const isKeyed = (endpoint: { readonly annotations: Context.Context<never> }): boolean =>
  Context.getOption(endpoint.annotations, Keyed)._tag === "Some"

/** The key of a request to a keyed endpoint, from its decoded headers (`Headers`). */
export const keyOf = (request: { readonly headers?: unknown }): string | undefined =>
  (request.headers as typeof Headers.Type | undefined)?.["idempotency-key"]

/** A `POST` endpoint that takes an `Idempotency-Key`, with the errors the key can end it with. */
export const post = <const Name extends string>(name: Name, path: `/${string}`) =>
  Problems.post(name, path)
    .setHeaders(Headers)
    .addError(Problems.IdempotencyKeyInFlight)
    .addError(Problems.IdempotencyKeyReused)
    .annotate(Keyed, true)
