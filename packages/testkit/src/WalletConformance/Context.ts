/**
 * What the rules share during one run: the caller, the wallets the provider supplied, and what the run
 * made the core do (the transfers it posted, the ids it must never post), which the statement rules
 * read back at the end.
 */
import * as Connector from "@laari/core/wallet/Connector"
import { Data, Effect } from "effect"
import { Temporal } from "temporal-polyfill"
import * as Http from "./Http.js"

/** The wallets of the core the suite moves money between; the protocol cannot make them. */
export interface Setup {
  /** An active wallet holding at least 10,000 laari (MVR 100): the payer of every payment. */
  readonly payer: string
  /** An active wallet that receives the payments (and pays the reversal back). */
  readonly merchant: string
  /** An active wallet that receives the fees. */
  readonly fee: string
  /** A frozen wallet, for `refusal-frozen`. */
  readonly frozen?: string | undefined
  /** A wallet blocked by the provider's rules, for `refusal-blocked`. */
  readonly blocked?: string | undefined
  /** An active wallet with a limit, for `refusal-limit`. */
  readonly limited?: string | undefined
  /** An active wallet holding nothing, for `refusal-balance`. */
  readonly empty?: string | undefined
  /** The environment the transfers name; default `test`. */
  readonly environment?: "test" | "live" | undefined
}

/** A rule could not be checked with what the provider supplied (no frozen wallet given, say). */
export class NotChecked extends Data.TaggedError("NotChecked")<{ readonly detail: string }> {}

export const notChecked = (detail: string) => Effect.fail(new NotChecked({ detail }))

export interface Context {
  readonly http: Http.Caller
  readonly setup: Setup
  readonly environment: "test" | "live"
  /** How many payments `statement-paging` makes in one day (more than a page). */
  readonly pagingTransfers: number
  /** Every transfer the core answered posted during the run, by id. */
  readonly posted: Map<string, { readonly request: Connector.TransferRequest; readonly postedAt: string }>
  /** Ids the core must never post (refused, cancelled), and why. */
  readonly absent: Map<string, string>
}

/** The Maldives date (`YYYY-MM-DD`) of a `posted_at`. */
export const postedOn = (postedAt: string): string =>
  Temporal.Instant.from(postedAt).toZonedDateTimeISO("Indian/Maldives").toPlainDate().toString()

export const epochMs = (postedAt: string): number => Temporal.Instant.from(postedAt).epochMilliseconds

/** A payment from the payer to the merchant with a fee, under a fresh id; `changes` override. */
export const payment = (
  ctx: Context,
  rule: string,
  changes: Partial<Connector.TransferRequest> = {}
): Connector.TransferRequest => ({
  id: crypto.randomUUID(),
  environment: ctx.environment,
  from: ctx.setup.payer,
  to: ctx.setup.merchant,
  amount: 100,
  fee: { to: ctx.setup.fee, amount: 2 },
  memo: `laari conformance: ${rule}`,
  kind: "payment",
  ...changes
})

export const post = (ctx: Context, request: unknown) => ctx.http.call("POST", "/transfers", { body: request })

/** Records a posted answer, so the statement rules look for it. */
export const remember = (ctx: Context, request: Connector.TransferRequest, answer: { posted_at: string }) =>
  Effect.sync(() => {
    if (!ctx.posted.has(request.id)) ctx.posted.set(request.id, { request, postedAt: answer.posted_at })
  })

/** `request` posted for the first time: `201 {id, status: "posted", posted_at}`, remembered. */
export const postNew = (ctx: Context, request: Connector.TransferRequest, what: string) =>
  Effect.gen(function* () {
    const answer = yield* post(ctx, request)
    const body = yield* Http.expect(answer, 201, Connector.TransferAnswer, what)
    if (body.status !== "posted")
      return yield* Http.broken(`${what}: expected status posted, but ${Http.seen(answer)}`)
    yield* Http.check(body.id === request.id, () => `${what}: answered id ${body.id}, not ${request.id}`)
    yield* remember(ctx, request, body)
    return body
  })

export const getTransfer = (ctx: Context, id: string, what: string) =>
  Effect.flatMap(ctx.http.call("GET", `/transfers/${id}`), (answer) =>
    Http.expect(answer, 200, Connector.Transfer, what)
  )

export const cancel = (ctx: Context, id: string, what: string) =>
  Effect.flatMap(ctx.http.call("POST", `/transfers/${id}/cancel`), (answer) =>
    Http.expect(answer, 200, Connector.CancelAnswer, what)
  )

export const getWallet = (ctx: Context, id: string, what: string) =>
  Effect.flatMap(ctx.http.call("GET", `/wallets/${encodeURIComponent(id)}`), (answer) =>
    Http.expect(answer, 200, Connector.Wallet, what)
  )

/** The fields of a transfer as asked for, in one line, for comparing what the core says it holds. */
export const asked = (t: {
  readonly from: string
  readonly to: string
  readonly amount: number
  readonly fee: Connector.Fee | null
  readonly kind: string
}) =>
  `from ${t.from} to ${t.to} amount ${t.amount} fee ${t.fee === null ? "null" : `${t.fee.amount} to ${t.fee.to}`} kind ${t.kind}`

/**
 * A refusal the payer itself gives: over its limit when it has one, else far beyond any test balance
 * (two billion laari, within a 32-bit integer).
 */
export const payerRefusal = (ctx: Context, rule: string) =>
  Effect.map(getWallet(ctx, ctx.setup.payer, "GET the payer's wallet"), (wallet) =>
    wallet.limit !== null
      ? {
          request: payment(ctx, rule, { amount: wallet.limit + 1 }),
          reason: "wallet_limit" as const
        }
      : {
          request: payment(ctx, rule, { amount: 2_000_000_000 }),
          reason: "insufficient_balance" as const
        }
  )
