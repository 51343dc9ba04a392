/**
 * `Idempotency-Key` on creates, charges, revokes, deactivations and cancellations (DESIGN section 9):
 * a retry replays the first response byte for byte with `Idempotent-Replay: true`.
 */
import { HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { type Auth, Idempotency, Store } from "@laari/core"
import { DateTime, Effect } from "effect"
import * as Keys from "../Keys.js"
import { fromError, message, type Reply, rawResponse, toResponse } from "./Reply.js"

const MaxKeyLength = 255

/** Ends the transaction without storing anything, answering `answer` (a replay, a refusal or a 5xx). */
class Abort {
  readonly _tag = "Abort"
  constructor(readonly answer: Reply | Idempotency.StoredResponse) {}
}

/**
 * Answers `run` once per key. Without an `Idempotency-Key` header `run` simply runs. `payload` is the
 * decoded request body, whose hash tells a retry from a different request under the same key.
 *
 * The claim, the command and the stored response are one transaction (core `Idempotency`): a duplicate
 * waits for the first request's transaction and replays it, or gets `409` past the store's bounded wait.
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

    const command = Effect.gen(function* () {
      const claim = yield* store.claim(scope, fingerprint, now)
      if (claim._tag === "Busy")
        return yield* Effect.fail(new Abort(message(409, Idempotency.messages.inFlight)))
      if (claim._tag === "Held") {
        const decision = Idempotency.decide(claim.record, fingerprint, now)
        if (decision._tag === "Replay") return yield* Effect.fail(new Abort(decision.response))
        if (decision._tag === "Mismatch")
          return yield* Effect.fail(new Abort(message(422, Idempotency.messages.mismatch)))
        yield* store.replace(scope, fingerprint, now)
      }
      const reply = yield* run
      // A 5xx rolls everything back, the claim included, so a retry runs the command again.
      if (reply.status >= 500) return yield* Effect.fail(new Abort(reply))
      yield* store.complete(scope, { status: reply.status, headers: {}, body: JSON.stringify(reply.body) })
      return reply
    })

    const outcome = yield* tx
      .withTransaction(command)
      .pipe(
        Effect.catchAll((e) =>
          Effect.succeed<Reply | Idempotency.StoredResponse>(e instanceof Abort ? e.answer : fromError(e))
        )
      )
    return "headers" in outcome
      ? rawResponse(outcome.status, outcome.body, { ...outcome.headers, "idempotent-replay": "true" })
      : toResponse(outcome)
  })
