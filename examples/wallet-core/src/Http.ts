/**
 * The protocol over HTTP: thin handlers that decode with the protocol's own schemas (core's `Connector`,
 * the same ones laari's client and the published OpenAPI document are built from), ask the book, and
 * answer. Errors are `{code, message}`; every answer carries the caller's `Request-Id` back.
 *
 * Outside the protocol, under `/admin`, the operator seeds and changes wallets (same token), and
 * `GET /healthz` answers without one.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Connector } from "@laari/core"
import { Effect, ParseResult, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import { Book, publicWallet } from "./Book.js"

const error = (status: number, code: Connector.ErrorCode, message: string) =>
  HttpServerResponse.unsafeJson({ code, message } satisfies Connector.ErrorBody, { status })

const json = (body: unknown, status = 200) => HttpServerResponse.unsafeJson(body, { status })

/** `amount: must be 1 or more; fee.to: must not be empty`: each field that failed, and its rule. */
const describe = (e: ParseResult.ParseError) =>
  ParseResult.ArrayFormatter.formatErrorSync(e)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ")
    // The protocol bounds a message; a body with many faults still gets an answer that decodes.
    .slice(0, 1000)

const TransferPath = Schema.Struct({ id: Connector.TransferId })
const WalletPath = Schema.Struct({ wallet_id: Schema.String })
const PhoneQuery = Schema.Struct({ phone: Connector.Phone })
const StatementQuery = Schema.Struct({
  posted_on: Connector.PostedOn,
  cursor: Schema.optional(Connector.Cursor)
})

/** `POST /admin/wallets`: a wallet to open with its opening balance. */
const NewWallet = Schema.Struct({
  id: Schema.optional(Connector.WalletId),
  phone: Connector.Phone,
  status: Schema.optionalWith(Connector.WalletStatus, { default: () => "active" as const }),
  limit: Schema.optionalWith(Connector.Wallet.fields.limit, { default: () => null }),
  time_zone: Schema.optionalWith(Connector.TimeZone, { default: () => "Indian/Maldives" }),
  balance: Schema.Int.pipe(Schema.nonNegative())
})
const WalletChanges = Schema.Struct({
  status: Schema.optional(Connector.WalletStatus),
  limit: Schema.optional(Connector.Wallet.fields.limit)
})

const protocol = HttpRouter.empty.pipe(
  HttpRouter.get(
    "/wallets/:wallet_id",
    Effect.gen(function* () {
      const { wallet_id } = yield* HttpRouter.schemaPathParams(WalletPath)
      const wallet = yield* (yield* Book).wallet(wallet_id)
      return wallet ? json(publicWallet(wallet)) : error(404, "not_found", `no wallet ${wallet_id}`)
    })
  ),
  HttpRouter.get(
    "/wallets",
    Effect.gen(function* () {
      const { phone } = yield* HttpServerRequest.schemaSearchParams(PhoneQuery)
      const wallet = yield* (yield* Book).walletByPhone(phone)
      return wallet ? json(publicWallet(wallet)) : error(404, "not_found", `no wallet with phone ${phone}`)
    })
  ),
  HttpRouter.post(
    "/transfers",
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.schemaBodyJson(Connector.TransferRequest)
      const outcome = yield* (yield* Book).post(request)
      switch (outcome._tag) {
        case "Answer":
          return json(outcome.body, outcome.status)
        case "Conflict":
          return error(409, "conflict", `transfer ${request.id} was already asked for with another body`)
        case "UnknownWallet":
          return error(404, "not_found", `no wallet ${outcome.wallet}`)
      }
    })
  ),
  HttpRouter.get(
    "/transfers/:id",
    Effect.gen(function* () {
      const { id } = yield* HttpRouter.schemaPathParams(TransferPath)
      const transfer = yield* (yield* Book).transfer(id)
      return transfer ? json(transfer) : error(404, "not_found", `no transfer ${id}`)
    })
  ),
  HttpRouter.post(
    "/transfers/:id/cancel",
    Effect.gen(function* () {
      const { id } = yield* HttpRouter.schemaPathParams(TransferPath)
      return json(yield* (yield* Book).cancel(id))
    })
  ),
  HttpRouter.get(
    "/transfers",
    Effect.gen(function* () {
      const { posted_on, cursor } = yield* HttpServerRequest.schemaSearchParams(StatementQuery)
      const page = yield* (yield* Book).statement(posted_on, cursor)
      return page ? json(page) : error(400, "invalid_request", "cursor: not a cursor this core gave")
    })
  )
)

const admin = HttpRouter.empty.pipe(
  HttpRouter.post(
    "/admin/wallets",
    Effect.gen(function* () {
      const wallet = yield* HttpServerRequest.schemaBodyJson(NewWallet)
      const opened = yield* (yield* Book).openWallet(wallet)
      return opened ? json(opened, 201) : error(409, "conflict", "a wallet with that id or phone exists")
    })
  ),
  HttpRouter.get(
    "/admin/wallets",
    Effect.map(
      Effect.flatMap(Book, (book) => book.wallets),
      (wallets) => json({ wallets })
    )
  ),
  HttpRouter.patch(
    "/admin/wallets/:wallet_id",
    Effect.gen(function* () {
      const { wallet_id } = yield* HttpRouter.schemaPathParams(WalletPath)
      const changes = yield* HttpServerRequest.schemaBodyJson(WalletChanges)
      const wallet = yield* (yield* Book).updateWallet(wallet_id, changes)
      return wallet ? json(wallet) : error(404, "not_found", `no wallet ${wallet_id}`)
    })
  )
)

const sameToken = (given: string, token: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  // Compared in constant time, so the answer's timing says nothing about how much of a guess was right.
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The whole service: health, then the bearer token, then the routes; unknown routes are a 404 body. */
export const app = (token: string) => {
  const routes = HttpRouter.concat(protocol, admin).pipe(
    Effect.catchTags({
      RouteNotFound: () => Effect.succeed(error(404, "not_found", "no such route")),
      // A request that does not decode is the caller's mistake: a 400 that says which field and why.
      ParseError: (e) => Effect.succeed(error(400, "invalid_request", describe(e))),
      RequestError: () => Effect.succeed(error(400, "invalid_request", "the body must be JSON"))
    })
  )
  const authenticated = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.url === "/healthz") return json({ ok: true })
    const header = request.headers.authorization ?? ""
    if (!header.startsWith("Bearer ") || !sameToken(header.slice("Bearer ".length), token))
      return error(401, "unauthorized", "send Authorization: Bearer <token>")
    return yield* routes
  })
  // Every answer carries the caller's Request-Id back, errors included.
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const response = yield* authenticated
    const requestId = request.headers[Connector.RequestIdHeader.toLowerCase()]
    return requestId === undefined
      ? response
      : HttpServerResponse.setHeader(response, Connector.RequestIdHeader, requestId)
  })
}
