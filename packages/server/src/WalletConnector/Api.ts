/**
 * The wallet connector protocol as an `HttpApi`: the document laari publishes at
 * `GET /wallet-connector/openapi.json` for a wallet provider to implement, built from core's `Connector`
 * schemas, the same ones laari's client decodes answers with. laari is the client here; the provider's
 * core system serves it.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import { Connector } from "@laari/core"
import { Schema } from "effect"
import * as OpenApiDocument from "../Http/OpenApiDocument.js"

/** The error body with its one `code`, answered with `status`. */
const error = <C extends Connector.ErrorCode>(code: C, status: number, description: string) =>
  Schema.Struct({
    code: Schema.Literal(code).annotations({ description: `Always \`${code}\`` }),
    message: Connector.ErrorBody.fields.message
  }).annotations({ identifier: `Error_${code}`, description, ...HttpApiSchema.annotations({ status }) })

export const Unauthorized = error("unauthorized", 401, "The bearer token is missing or wrong")
export const InvalidRequest = error(
  "invalid_request",
  400,
  "The request does not decode: the message says why"
)
export const NotFound = error("not_found", 404, "No such wallet, or the core never took this transfer")
export const Conflict = error("conflict", 409, "This transfer id was used before with another body")

/** The core's refusal: `422` with the refused transfer, a final answer for this id. */
export const Refused = Connector.Refused.annotations(HttpApiSchema.annotations({ status: 422 }))

/** `Authorization: Bearer <LAARI_WALLET_TOKEN>` on every call. */
export class Authorization extends HttpApiMiddleware.Tag<Authorization>()(
  "laari/WalletConnector/Authorization",
  {
    failure: Unauthorized,
    security: {
      bearer: HttpApiSecurity.bearer.pipe(
        HttpApiSecurity.annotate(
          OpenApi.Description,
          "`Authorization: Bearer <token>`: the token the provider gave laari's operator, who sets it as `LAARI_WALLET_TOKEN`"
        )
      )
    }
  }
) {}

/**
 * `Request-Id` on every call. Headers reach a server lower-cased, so the schema's key is; the document
 * spells it as the protocol does (`finish` below).
 */
const Headers = Schema.Struct({ "request-id": Connector.RequestId })

const WalletPath = Schema.Struct({
  wallet_id: Connector.WalletId.annotations({ description: "The wallet's id in the core" })
})
const TransferPath = Schema.Struct({
  id: Connector.TransferId.annotations({ description: "laari's id of the transfer (a UUID)" })
})

export class WalletsApi extends HttpApiGroup.make("wallets")
  .add(
    HttpApiEndpoint.get("wallet", "/wallets/:wallet_id")
      .setPath(WalletPath)
      .setHeaders(Headers)
      .addSuccess(Connector.Wallet)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "A wallet by its id")
      .annotate(
        OpenApi.Description,
        "The wallet's holder, status, limit and time zone, or `404` when there is none."
      )
  )
  .add(
    HttpApiEndpoint.get("walletByPhone", "/wallets")
      .setUrlParams(Schema.Struct({ phone: Connector.Phone }))
      .setHeaders(Headers)
      .addSuccess(Connector.Wallet)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "A wallet by its holder's phone number")
      .annotate(OpenApi.Description, "The wallet of the phone number (`+960` and seven digits), or `404`.")
  )
  // On each group, not the API: the generator gives every operation `security: []` (no token) unless
  // its own group or endpoint names the scheme.
  .middleware(Authorization)
  .annotate(OpenApi.Title, "Wallets")
  .annotate(OpenApi.Description, "The wallets laari's customers and merchants pay from and into.") {}

export class TransfersApi extends HttpApiGroup.make("transfers")
  .add(
    HttpApiEndpoint.post("transfer", "/transfers")
      .setHeaders(Headers)
      .setPayload(Connector.TransferRequest)
      .addSuccess(Connector.Posted, { status: 201 })
      .addSuccess(
        Schema.Union(Connector.Posted, Connector.Cancelled).annotations({
          description:
            "The first answer again (a repeat of a posted id), or `cancelled` (an id laari cancelled)"
        })
      )
      .addError(Refused)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Make a transfer, once per id")
      .annotate(
        OpenApi.Description,
        "Posts the transfer: `201` posted, `422` refused (nothing moved). Idempotent on `id`: the same id with the same body answers the first answer again (`200` for posted, the same `422` for refused) and moves nothing; with another body `409`. An id cancelled before answers `200` `cancelled` and moves nothing."
      )
  )
  .add(
    HttpApiEndpoint.get("status", "/transfers/:id")
      .setPath(TransferPath)
      .setHeaders(Headers)
      .addSuccess(Connector.Transfer)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "A transfer's status")
      .annotate(
        OpenApi.Description,
        "The transfer with its status (`posted`, `refused`, `cancelled`), or `404` when the core never took it."
      )
  )
  .add(
    HttpApiEndpoint.post("cancel", "/transfers/:id/cancel")
      .setPath(TransferPath)
      .setHeaders(Headers)
      .addSuccess(Connector.CancelAnswer)
      .annotate(OpenApi.Summary, "Cancel a transfer that was never posted; final")
      .annotate(
        OpenApi.Description,
        "`cancelled` when it was never posted (an id never seen is recorded as cancelled): from then on a `POST /transfers` with this id answers `cancelled` and moves nothing. `posted` when it already was, `refused` when it was refused. The answer is final."
      )
  )
  .add(
    HttpApiEndpoint.get("statement", "/transfers")
      .setUrlParams(
        Schema.Struct({
          posted_on: Connector.PostedOn,
          cursor: Schema.optional(Connector.Cursor)
        })
      )
      .setHeaders(Headers)
      .addSuccess(Connector.StatementPage)
      .annotate(OpenApi.Summary, "The statement of one Maldives day")
      .annotate(
        OpenApi.Description,
        `Every transfer the core posted on the Maldives day \`posted_on\` (Indian/Maldives, +05:00), ordered by \`posted_at\` then \`id\`, at most ${Connector.StatementPageSize} a page; the next page is asked for with \`cursor\` = the page's \`next_cursor\`, \`null\` on the last.`
      )
  )
  .middleware(Authorization)
  .annotate(OpenApi.Title, "Transfers")
  .annotate(OpenApi.Description, "Moving money between wallets, and the record of what moved.") {}

/** The response header every answer carries. */
const RequestIdHeader = {
  description: "The caller's `Request-Id`, sent back",
  schema: { type: "string", maxLength: 200 }
}

interface Operation {
  parameters?: Array<{ in?: string; name?: string }>
  responses?: Record<string, { headers?: Record<string, unknown> }>
}
type Json = Record<string, unknown>

/**
 * laari's own finishing (the decode error HttpApi lists but a core need not send, responses open to
 * additive fields, `Request-Id` on every answer), then what differs here: the header parameter spelled
 * `Request-Id`, and the server, which is the provider's, not laari's.
 */
const finish = (spec: Json): Json => {
  const doc = OpenApiDocument.finish({ internal: false })(spec)
  for (const item of Object.values(doc.paths as Record<string, Record<string, Operation>>))
    for (const op of Object.values(item)) {
      for (const parameter of op.parameters ?? [])
        if (parameter.in === "header" && parameter.name === "request-id")
          parameter.name = Connector.RequestIdHeader
      for (const response of Object.values(op.responses ?? {}))
        response.headers = { ...response.headers, [Connector.RequestIdHeader]: RequestIdHeader }
    }
  doc.servers = [
    {
      url: "https://wallet-core.example",
      description:
        "The wallet provider's core system, in production or its test installation: its base URL is what laari's operator sets as `LAARI_WALLET_URL`",
      // Between laari and the provider only, never a public API.
      "x-internal": true
    }
  ]
  return doc
}

export class WalletConnectorApi extends HttpApi.make("laari-wallet-connector")
  .add(WalletsApi)
  .add(TransfersApi)
  .addError(InvalidRequest)
  .annotate(OpenApi.Title, "laari wallet connector")
  .annotate(OpenApi.Version, "1")
  .annotate(OpenApi.Transform, finish)
  .annotate(
    OpenApi.Description,
    "What a wallet provider's core system serves so that laari can move money in the provider's own ledger: laari is the client. JSON bodies, snake_case, amounts in whole laari (100 laari = 1 MVR). Every call carries `Authorization: Bearer <token>` and a `Request-Id`, which every answer carries back. See docs/wallet-connector.md."
  ) {}
