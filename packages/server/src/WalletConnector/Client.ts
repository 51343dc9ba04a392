/**
 * laari's client of the wallet connector protocol (`Api.ts`, docs/wallet-connector.md): each call to the
 * provider's core with the bearer token, a fresh `Request-Id` and its own timeout, and each answer
 * decoded with core's `Connector` schemas and classified. A known answer (posted, refused, cancelled, not
 * taken) is only ever what the core said in the protocol's words; anything else (a timeout, a reset, a
 * `5xx`, a `401`, an answer that does not decode, an answer about another id) is `Unknown`: never taken
 * as a refusal or a success, so no money is counted as moved or not moved on a guess.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Connector } from "@laari/core"
import { Context, Data, Duration, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"

/** What the client needs: where the core is, its token, how long one call may take. */
export interface ClientConfig {
  /** The core's base URL (`LAARI_WALLET_URL`), without a trailing slash. */
  readonly url: string
  /** `LAARI_WALLET_TOKEN`. */
  readonly token: string
  /** `LAARI_WALLET_TIMEOUT_MS`: the most one call may take, answer read and decoded. */
  readonly timeoutMs: number
}

/** The core posted the transfer. `postedAt` is `null` when told by a cancel, whose answer does not say when. */
export class Posted extends Data.TaggedClass("Posted")<{
  readonly id: string
  readonly postedAt: string | null
}> {}

/** The core refused the transfer: nothing moved. `reason` is `null` when told by a cancel. */
export class Refused extends Data.TaggedClass("Refused")<{
  readonly id: string
  readonly reason: Connector.RefusalReason | null
}> {}

/** The transfer is cancelled: nothing moved, and nothing will under its id. */
export class Cancelled extends Data.TaggedClass("Cancelled")<{ readonly id: string }> {}

/** `GET /transfers/{id}` answered `404 not_found`: the core never took this id. */
export class NotTaken extends Data.TaggedClass("NotTaken")<{ readonly id: string }> {}

/** No answer the protocol defines: what happened is not known, and must be found out, never assumed. */
export class Unknown extends Data.TaggedError("Unknown")<{
  readonly cause: string
  /** The `Request-Id` the call was sent with, as the core's logs know it. */
  readonly requestId: string
}> {
  override get message() {
    return `wallet core: outcome unknown (Request-Id ${this.requestId}): ${this.cause}`
  }
}

/** `409 conflict`: the transfer id was used before with another body. Nothing moved; laari's bug. */
export class TransferConflict extends Data.TaggedError("TransferConflict")<{
  readonly id: string
  readonly detail: string
  readonly requestId: string
}> {
  override get message() {
    return `wallet core: transfer ${this.id} was sent before with another body (Request-Id ${this.requestId}): ${this.detail}`
  }
}

export type TransferOutcome = Posted | Refused | Cancelled | Unknown
export type StatusOutcome = Posted | Refused | Cancelled | NotTaken | Unknown
export type CancelOutcome = Posted | Refused | Cancelled | Unknown

export interface WalletConnectorClientService {
  /** The wallet, or none on `404 not_found`. */
  readonly wallet: (id: string) => Effect.Effect<Option.Option<Connector.Wallet>, Unknown>
  /** The wallet of an E.164 phone number (`+9607771234`), or none on `404 not_found`. */
  readonly walletByPhone: (phone: string) => Effect.Effect<Option.Option<Connector.Wallet>, Unknown>
  /** `POST /transfers`: posted, refused, cancelled or unknown; `Conflict` on `409`. */
  readonly transfer: (request: Connector.TransferRequest) => Effect.Effect<TransferOutcome, TransferConflict>
  /** `GET /transfers/{id}`: what the core has of the id, `NotTaken` when nothing. */
  readonly status: (id: string) => Effect.Effect<StatusOutcome>
  /** `POST /transfers/{id}/cancel`: the final answer. */
  readonly cancel: (id: string) => Effect.Effect<CancelOutcome>
  /** One page of the statement of a Maldives day (`YYYY-MM-DD`). */
  readonly statement: (
    postedOn: string,
    cursor?: string | undefined
  ) => Effect.Effect<Connector.StatementPage, Unknown>
}

export class WalletConnectorClient extends Context.Tag("laari/WalletConnector/Client")<
  WalletConnectorClient,
  WalletConnectorClientService
>() {}

/** What came back: the status and the body as JSON, `undefined` when it is none. */
interface Answer {
  readonly status: number
  readonly body: unknown
  readonly requestId: string
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A schema's decoder of a body, made once: an error as the text `Unknown` carries. */
const decoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "all" })
  return (body: unknown): Either.Either<A, string> =>
    Either.mapLeft(decode(body), (e) => ParseResult.TreeFormatter.formatErrorSync(e))
}

const decodeError = decoder(Connector.ErrorBody)
const decodeWallet = decoder(Connector.Wallet)
const decodePosted = decoder(Connector.Posted)
// A repeat's answer: the first one, or the cancel that got there before it.
const decodeRepeat = decoder(Schema.Union(Connector.Posted, Connector.Cancelled))
const decodeRefused = decoder(Connector.Refused)
const decodeTransfer = decoder(Connector.Transfer)
const decodeCancel = decoder(Connector.CancelAnswer)
const decodeStatement = decoder(Connector.StatementPage)

/** An answer the protocol does not define for this call, as the cause of `Unknown`. */
const unexpected = (answer: Answer, what: string): Unknown =>
  new Unknown({
    cause: `HTTP ${answer.status} is no answer to ${what}${
      answer.body === undefined ? "" : `: ${JSON.stringify(answer.body).slice(0, 300)}`
    }`,
    requestId: answer.requestId
  })

const undecodable = (answer: Answer, what: string, error: string): Unknown =>
  new Unknown({
    cause: `HTTP ${answer.status} to ${what} does not decode: ${error}`,
    requestId: answer.requestId
  })

/** `404` with the protocol's `not_found` body; any other 404 (a proxy's, a wrong URL's) is not the core's. */
const isNotFound = (answer: Answer): boolean =>
  answer.status === 404 &&
  Either.match(decodeError(answer.body), {
    onLeft: () => false,
    onRight: (e) => e.code === "not_found"
  })

const fromTransfer = (body: Connector.TransferAnswer | Connector.Transfer): Posted | Refused | Cancelled => {
  switch (body.status) {
    case "posted":
      return new Posted({ id: body.id, postedAt: body.posted_at })
    case "refused":
      return new Refused({ id: body.id, reason: body.reason })
    case "cancelled":
      return new Cancelled({ id: body.id })
  }
}

/** The outcome an answer about a transfer gives, when it is about `id`. */
const aboutTransfer = <B extends Connector.TransferAnswer | Connector.Transfer>(
  answer: Answer,
  what: string,
  id: string,
  decode: Either.Either<B, string>
): Posted | Refused | Cancelled | Unknown =>
  Either.match(decode, {
    onLeft: (error) => undecodable(answer, what, error),
    onRight: (body) =>
      body.id === id
        ? fromTransfer(body)
        : new Unknown({
            cause: `${what} answered about another transfer, ${body.id}`,
            requestId: answer.requestId
          })
  })

/** The client of the core at `config.url`, over the `HttpClient` it is given. */
export const make = (config: ClientConfig) =>
  Effect.map(HttpClient.HttpClient, (http): WalletConnectorClientService => {
    const base = config.url.replace(/\/+$/, "")
    const timeout = Duration.millis(config.timeoutMs)

    /** One call: sent, answered, its body read, within the timeout; any failure on the way is `Unknown`. */
    const call = (
      request: HttpClientRequest.HttpClientRequest,
      what: string
    ): Effect.Effect<Answer, Unknown> => {
      const requestId = crypto.randomUUID()
      return http
        .execute(
          request.pipe(
            HttpClientRequest.bearerToken(config.token),
            HttpClientRequest.setHeader(Connector.RequestIdHeader, requestId),
            HttpClientRequest.acceptJson
          )
        )
        .pipe(
          Effect.flatMap((response) =>
            Effect.map(
              response.text,
              (text): Answer => ({ status: response.status, body: parse(text), requestId })
            )
          ),
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () =>
              new Unknown({ cause: `${what}: no answer within ${config.timeoutMs} ms`, requestId })
          }),
          Effect.catchTags({
            RequestError: (e) => Effect.fail(new Unknown({ cause: `${what}: ${e.message}`, requestId })),
            ResponseError: (e) => Effect.fail(new Unknown({ cause: `${what}: ${e.message}`, requestId }))
          })
        )
    }

    const get = (path: string, urlParams: Record<string, string> = {}) =>
      HttpClientRequest.get(`${base}${path}`).pipe(HttpClientRequest.setUrlParams(urlParams))

    const walletAt = (request: HttpClientRequest.HttpClientRequest, what: string) =>
      Effect.flatMap(call(request, what), (answer) => {
        if (answer.status === 200)
          return Either.match(decodeWallet(answer.body), {
            onLeft: (error) => Effect.fail(undecodable(answer, what, error)),
            onRight: (wallet) => Effect.succeed(Option.some(wallet))
          })
        if (isNotFound(answer)) return Effect.succeed(Option.none())
        return Effect.fail(unexpected(answer, what))
      })

    const encodeRequest = Schema.encodeSync(Connector.TransferRequest)

    return {
      wallet: (id) => walletAt(get(`/wallets/${encodeURIComponent(id)}`), `GET /wallets/${id}`),

      walletByPhone: (phone) => walletAt(get("/wallets", { phone }), "GET /wallets?phone="),

      transfer: (request) => {
        const what = `POST /transfers ${request.id}`
        return Effect.suspend(() =>
          call(
            HttpClientRequest.post(`${base}/transfers`).pipe(
              HttpClientRequest.bodyUnsafeJson(encodeRequest(request))
            ),
            what
          )
        ).pipe(
          Effect.flatMap((answer): Effect.Effect<TransferOutcome, TransferConflict> => {
            switch (answer.status) {
              case 201:
                return Effect.succeed(aboutTransfer(answer, what, request.id, decodePosted(answer.body)))
              case 200:
                return Effect.succeed(aboutTransfer(answer, what, request.id, decodeRepeat(answer.body)))
              case 422:
                return Effect.succeed(aboutTransfer(answer, what, request.id, decodeRefused(answer.body)))
              case 409:
                return Either.match(decodeError(answer.body), {
                  onLeft: (error) => Effect.succeed(undecodable(answer, what, error)),
                  onRight: (e) =>
                    e.code === "conflict"
                      ? Effect.fail(
                          new TransferConflict({
                            id: request.id,
                            detail: e.message,
                            requestId: answer.requestId
                          })
                        )
                      : Effect.succeed(unexpected(answer, what))
                })
              default:
                return Effect.succeed(unexpected(answer, what))
            }
          }),
          Effect.catchTag("Unknown", Effect.succeed)
        )
      },

      status: (id) => {
        const what = `GET /transfers/${id}`
        return call(get(`/transfers/${encodeURIComponent(id)}`), what).pipe(
          Effect.map((answer): StatusOutcome => {
            if (answer.status === 200) return aboutTransfer(answer, what, id, decodeTransfer(answer.body))
            if (isNotFound(answer)) return new NotTaken({ id })
            return unexpected(answer, what)
          }),
          Effect.catchTag("Unknown", Effect.succeed)
        )
      },

      cancel: (id) => {
        const what = `POST /transfers/${id}/cancel`
        return call(HttpClientRequest.post(`${base}/transfers/${encodeURIComponent(id)}/cancel`), what).pipe(
          Effect.map((answer): CancelOutcome => {
            if (answer.status !== 200) return unexpected(answer, what)
            return Either.match(decodeCancel(answer.body), {
              onLeft: (error) => undecodable(answer, what, error),
              onRight: ({ status }) =>
                status === "cancelled"
                  ? new Cancelled({ id })
                  : status === "posted"
                    ? new Posted({ id, postedAt: null })
                    : new Refused({ id, reason: null })
            })
          }),
          Effect.catchTag("Unknown", Effect.succeed)
        )
      },

      statement: (postedOn, cursor) => {
        const what = `GET /transfers?posted_on=${postedOn}`
        return Effect.flatMap(
          call(
            get(
              "/transfers",
              cursor === undefined ? { posted_on: postedOn } : { posted_on: postedOn, cursor }
            ),
            what
          ),
          (answer) =>
            answer.status !== 200
              ? Effect.fail(unexpected(answer, what))
              : Either.match(decodeStatement(answer.body), {
                  onLeft: (error) => Effect.fail(undecodable(answer, what, error)),
                  onRight: Effect.succeed
                })
        )
      }
    }
  })

/** The client as a service, over the `HttpClient` below it. */
export const layer = (
  config: ClientConfig
): Layer.Layer<WalletConnectorClient, never, HttpClient.HttpClient> =>
  Layer.effect(WalletConnectorClient, make(config))

/**
 * The client over its own undici connection pool: the charge path's calls are small and many, and undici's
 * `request` costs a fraction of the CPU `fetch` spends per call (its web streams and its per-call objects).
 */
export const live = (config: ClientConfig): Layer.Layer<WalletConnectorClient> =>
  layer(config).pipe(Layer.provide(NodeHttpClient.layerUndici))
