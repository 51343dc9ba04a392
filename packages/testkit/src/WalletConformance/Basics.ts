/**
 * The rules about the calls themselves: the token, the wallets' lookups, unknown transfers and bodies
 * that do not decode.
 */
import * as Connector from "@laari/core/wallet/Connector"
import { Effect } from "effect"
import { type Context, getWallet, payment, post } from "./Context.js"
import * as Http from "./Http.js"

const expectError = (answer: Http.Answer, status: number, code: Connector.ErrorCode, what: string) =>
  Effect.flatMap(Http.expect(answer, status, Connector.ErrorBody, what), (body) =>
    Http.check(body.code === code, () => `${what}: expected code ${code}, but ${Http.seen(answer)}`)
  )

/** `401 {code: "unauthorized"}` without a token, with another scheme's header and with a wrong token. */
export const authentication = (ctx: Context) =>
  Effect.gen(function* () {
    const path = `/wallets/${encodeURIComponent(ctx.setup.payer)}`
    yield* expectError(
      yield* ctx.http.call("GET", path, { token: null }),
      401,
      "unauthorized",
      "GET a wallet without a token"
    )
    yield* expectError(
      yield* ctx.http.call("GET", path, { token: `wrong-${crypto.randomUUID()}` }),
      401,
      "unauthorized",
      "GET a wallet with a wrong token"
    )
    const request = payment(ctx, "authentication")
    yield* expectError(
      yield* ctx.http.call("POST", "/transfers", { body: request, token: null }),
      401,
      "unauthorized",
      "POST /transfers without a token"
    )
    // Nothing was taken without the token: the id is still unknown.
    yield* expectError(
      yield* ctx.http.call("GET", `/transfers/${request.id}`),
      404,
      "not_found",
      "GET a transfer first sent without a token"
    )
  })

/** The three wallets answer by id, the payer by phone too, and an unknown id or phone is a 404. */
export const walletLookup = (ctx: Context) =>
  Effect.gen(function* () {
    const roles = [
      ["payer", ctx.setup.payer],
      ["merchant", ctx.setup.merchant],
      ["fee", ctx.setup.fee]
    ] as const
    let phone = ""
    for (const [role, id] of roles) {
      const wallet = yield* getWallet(ctx, id, `GET the ${role} wallet ${id}`)
      yield* Http.check(wallet.id === id, () => `GET the ${role} wallet ${id}: answered id ${wallet.id}`)
      yield* Http.check(
        wallet.status === "active",
        () => `the ${role} wallet ${id} is ${wallet.status}: the suite needs it active`
      )
      if (role === "payer") phone = wallet.phone
    }
    const byPhone = yield* ctx.http.call("GET", `/wallets?phone=${encodeURIComponent(phone)}`)
    const found = yield* Http.expect(byPhone, 200, Connector.Wallet, `GET /wallets?phone= the payer's phone`)
    yield* Http.check(
      found.id === ctx.setup.payer,
      () => `GET /wallets?phone=${phone} answered wallet ${found.id}, not the payer ${ctx.setup.payer}`
    )
    yield* expectError(
      yield* ctx.http.call("GET", `/wallets/laari-conformance-${crypto.randomUUID()}`),
      404,
      "not_found",
      "GET an unknown wallet"
    )
  })

/** `GET /transfers/{id}` of an id never sent is `404 {code: "not_found"}`. */
export const unknownTransfer = (ctx: Context) =>
  Effect.gen(function* () {
    yield* expectError(
      yield* ctx.http.call("GET", `/transfers/${crypto.randomUUID()}`),
      404,
      "not_found",
      "GET a transfer never sent"
    )
  })

/** Bodies and statement days that do not decode are `400 {code: "invalid_request"}`, none a 5xx. */
export const invalidRequest = (ctx: Context) =>
  Effect.gen(function* () {
    const base = payment(ctx, "invalid-request")
    const bad: ReadonlyArray<readonly [string, unknown]> = [
      ["a body that is not JSON", "{not json"],
      ["an empty object", {}],
      ["amount 0", { ...base, amount: 0 }],
      ["amount 1.5", { ...base, amount: 1.5 }],
      ["a fee above the amount", { ...base, amount: 10, fee: { to: ctx.setup.fee, amount: 11 } }],
      ["a memo of 141 characters", { ...base, memo: "m".repeat(Connector.MaxMemoLength + 1) }],
      ["an id that is not a UUID", { ...base, id: "not-a-uuid" }],
      ["kind refund", { ...base, kind: "refund" }]
    ]
    for (const [what, body] of bad)
      yield* expectError(yield* post(ctx, body), 400, "invalid_request", `POST /transfers with ${what}`)
    // None of them was taken.
    yield* expectError(
      yield* ctx.http.call("GET", `/transfers/${base.id}`),
      404,
      "not_found",
      "GET a transfer whose bodies were all refused as invalid"
    )
    yield* expectError(
      yield* ctx.http.call("GET", "/transfers?posted_on=2026-13-45"),
      400,
      "invalid_request",
      "GET /transfers?posted_on=2026-13-45"
    )
  })
