/**
 * `Idempotency-Key` on creates, charges, revokes, deactivations and cancellations (DESIGN section 9):
 * a retry replays the first response byte for byte with `Idempotent-Replay: true`.
 */
import { HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { type Auth, Errors, Idempotency, Store } from "@laari/core"
import { DateTime, Effect, Option } from "effect"
import * as Keys from "../Keys.js"
import { fromError, message, type Reply, rawResponse, toResponse } from "./Reply.js"

const MaxKeyLength = 255

/** A failure that must roll the command back (a 5xx answer is never stored). */
class Abort {
  readonly _tag = "Abort"
  constructor(readonly reply: Reply) {}
}

const unavailable = (e: Errors.ServiceUnavailable) => fromError(e)

/**
 * Answers `run` once per key. Without an `Idempotency-Key` header `run` simply runs. `payload` is the
 * decoded request body, whose hash tells a retry from a different request under the same key.
 */
export const idempotent = <R>(
  principal: Auth.Principal,
  payload: unknown,
  run: Effect.Effect<Reply, never, R>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  R | HttpServerRequest.HttpServerRequest | Idempotency.IdempotencyStore | Store.Transactor
> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const key = request.headers["idempotency-key"]
    if (key === undefined) return toResponse(yield* run)
    if (key.length === 0 || key.length > MaxKeyLength)
      return toResponse(message(422, `Idempotency-Key must be 1 to ${MaxKeyLength} characters`))

    const store = yield* Idempotency.IdempotencyStore
    const tx = yield* Store.Transactor
    const scope: Idempotency.Scope = {
      merchantId: principal.merchantId,
      environment: principal.environment,
      method: request.method,
      path: new URL(request.url, "http://laari").pathname,
      key
    }
    const fingerprint = Keys.hash(JSON.stringify(payload ?? null))
    const now = yield* DateTime.now

    const claim = Effect.gen(function* () {
      const existing = yield* store.reserve(scope, fingerprint, now)
      if (existing === undefined) return Option.none<Reply | Idempotency.StoredResponse>()
      const decision = Idempotency.decide(existing, fingerprint, now)
      switch (decision._tag) {
        case "Replay":
          return Option.some<Reply | Idempotency.StoredResponse>(decision.response)
        case "Mismatch":
          return Option.some(message(422, Idempotency.messages.mismatch))
        case "InFlight":
          return Option.some(message(409, Idempotency.messages.inFlight))
        case "Proceed":
          return (yield* store.takeOver(existing, fingerprint, now))
            ? Option.none()
            : Option.some(message(409, Idempotency.messages.inFlight))
      }
    })
    const claimed = yield* claim.pipe(
      Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(Option.some(unavailable(e))))
    )
    if (Option.isSome(claimed)) {
      const answer = claimed.value
      return "headers" in answer
        ? rawResponse(answer.status, answer.body, { ...answer.headers, "idempotent-replay": "true" })
        : toResponse(answer)
    }

    // The response is stored in the command's own transaction: stored means committed.
    const outcome = yield* tx
      .withTransaction(
        Effect.gen(function* () {
          const reply = yield* run
          if (reply.status >= 500) return yield* Effect.fail(new Abort(reply))
          yield* store.complete(scope, {
            status: reply.status,
            headers: {},
            body: JSON.stringify(reply.body)
          })
          return reply
        })
      )
      .pipe(
        Effect.catchAll((e) => Effect.succeed(e instanceof Abort ? e.reply : unavailable(e))),
        Effect.onExit((exit) =>
          exit._tag === "Success" && exit.value.status < 500
            ? Effect.void
            : Effect.ignore(store.release(scope))
        )
      )
    return toResponse(outcome)
  })
