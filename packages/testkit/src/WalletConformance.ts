/**
 * The wallet connector's conformance suite: what a wallet provider runs against its own core before laari
 * calls it (`laari wallet-conformance --url URL --token TOKEN`). Each rule is one check of the protocol,
 * made over HTTP with the bearer token and a fresh `Request-Id` per call, decoded with core's `Connector`
 * schemas. The protocol cannot make wallets, so the provider names them (`Setup`); the transfers use fresh
 * ids, so the suite runs again and again against a live core. A run moves a little money: about 1,600 laari
 * from the payer, most to the merchant, some to the fee wallet, 50 back.
 */
import { Effect } from "effect"
import * as Basics from "./WalletConformance/Basics.js"
import { type Context, NotChecked, type Setup } from "./WalletConformance/Context.js"
import * as Http from "./WalletConformance/Http.js"
import * as Money from "./WalletConformance/Money.js"
import * as Refusals from "./WalletConformance/Refusals.js"
import * as Statement from "./WalletConformance/Statement.js"
import * as Transfers from "./WalletConformance/Transfers.js"

export type { Setup } from "./WalletConformance/Context.js"

type Check = (ctx: Context) => Effect.Effect<unknown, Http.Broken | NotChecked>

/** The rules, in the order they run (the statement's last: they read back what the others posted). */
export const rules = [
  ["authentication", "401 unauthorized without a token or with a wrong one", Basics.authentication],
  [
    "wallet-lookup",
    "GET /wallets/{id} and ?phone= answer the wallets, 404 for unknown ones",
    Basics.walletLookup
  ],
  ["unknown-transfer", "GET /transfers/{id} of an id never sent is 404 not_found", Basics.unknownTransfer],
  ["invalid-request", "bodies and days that do not decode are 400 invalid_request", Basics.invalidRequest],
  ["payment-posts", "a new payment is 201 posted, and GET holds it as asked", Transfers.paymentPosts],
  [
    "repeat-same-answer",
    "the same id and body again is 200 with the first answer",
    Transfers.repeatSameAnswer
  ],
  ["concurrent-repeat", "the same new transfer sent twice at once posts once", Transfers.concurrentRepeat],
  ["conflicting-body", "the same id with another body is 409 conflict", Transfers.conflictingBody],
  ["cancel-before-post", "a cancel of an unknown id is cancelled, and stays so", Transfers.cancelBeforePost],
  [
    "late-post-after-cancel",
    "a POST after its cancel is 200 cancelled, moves nothing",
    Transfers.latePostAfterCancel
  ],
  ["cancel-after-post", "a cancel of a posted transfer answers posted", Transfers.cancelAfterPost],
  ["refusal-repeat", "a refusal repeated is the same 422, GET reads it refused", Transfers.refusalRepeat],
  ["cancel-refused", "a cancel of a refused transfer answers refused", Transfers.cancelRefused],
  [
    "money-moves-once",
    "a repeat, a refusal and a POST after its cancel move no money (needs --empty)",
    Money.movesOnce
  ],
  ["refusal-frozen", "a payment from a frozen wallet is refused wallet_frozen", Refusals.frozen],
  ["refusal-blocked", "a payment from a blocked wallet is refused blocked_by_rules", Refusals.blocked],
  ["refusal-limit", "a payment above the wallet's limit is refused wallet_limit", Refusals.limited],
  ["refusal-balance", "a payment from an empty wallet is refused insufficient_balance", Refusals.empty],
  ["reversal", "a reversal, merchant to payer, posts", Transfers.reversal],
  [
    "reversal-balance",
    "a reversal from an empty wallet is refused insufficient_balance",
    Refusals.reversalBalance
  ],
  ["statement-paging", "a day of more than 100 transfers pages by next_cursor", Statement.paging],
  ["statement-complete", "every transfer posted is in its day's statement once", Statement.complete]
] as const satisfies ReadonlyArray<readonly [string, string, Check]>

export type Rule = (typeof rules)[number][0] | "request-id"

export interface Result {
  readonly rule: Rule
  /** `not checked`: the provider gave nothing to check it with (a frozen wallet, say). */
  readonly outcome: "ok" | "failed" | "not checked"
  /** True only when the rule was checked and held. */
  readonly ok: boolean
  /** What was seen: why it failed, why it was not checked, or what held. */
  readonly detail: string
}

export interface Options {
  /** The core's base URL, e.g. `http://localhost:4100`. */
  readonly url: string
  /** The bearer token laari will call the core with (`LAARI_WALLET_TOKEN`). */
  readonly token: string
  readonly setup: Setup
  /** Per call; default 10 s. */
  readonly timeoutMs?: number | undefined
  /** How many one-laari payments `statement-paging` makes; default 101 (more than a page). */
  readonly pagingTransfers?: number | undefined
}

const result = (rule: Rule, outcome: Result["outcome"], detail: string): Result => ({
  rule,
  outcome,
  ok: outcome === "ok",
  detail
})

/** Runs every rule against the core at `url`; never fails: a rule that cannot run is a failed result. */
export const run = (options: Options): Effect.Effect<ReadonlyArray<Result>> =>
  Effect.gen(function* () {
    const http = Http.make({ url: options.url, token: options.token, timeoutMs: options.timeoutMs ?? 10_000 })
    const ctx: Context = {
      http,
      setup: options.setup,
      environment: options.setup.environment ?? "test",
      pagingTransfers: options.pagingTransfers ?? 101,
      posted: new Map(),
      absent: new Map()
    }
    const results: Array<Result> = []
    for (const [rule, , check] of rules) {
      const outcome = yield* (check as Check)(ctx).pipe(
        Effect.map((held) => result(rule, "ok", typeof held === "string" ? held : "")),
        Effect.catchAll((e) =>
          Effect.succeed(result(rule, e._tag === "NotChecked" ? "not checked" : "failed", e.detail))
        ),
        Effect.catchAllDefect((defect) =>
          Effect.succeed(result(rule, "failed", `the check itself broke: ${String(defect)}`))
        )
      )
      results.push(outcome)
    }
    const missing = http.log.filter((l) => l.echoed !== l.sent)
    results.push(
      http.log.length === 0
        ? result("request-id", "not checked", "the core answered nothing")
        : missing.length === 0
          ? result("request-id", "ok", `${http.log.length} answers, each with its Request-Id`)
          : result(
              "request-id",
              "failed",
              `${missing.length} of ${http.log.length} answers did not carry the Request-Id back, e.g. ${missing[0]!.call} sent ${missing[0]!.sent}, got ${missing[0]!.echoed ?? "none"}`
            )
    )
    return results
  })

export const runPromise = (options: Options): Promise<ReadonlyArray<Result>> =>
  Effect.runPromise(run(options))

/** One line per rule: `ok  rule`, `FAILED  rule: what was seen`, `not checked  rule: why`. */
export const lines = (results: ReadonlyArray<Result>): ReadonlyArray<string> =>
  results.map((r) =>
    r.outcome === "ok"
      ? `ok  ${r.rule}${r.detail === "" ? "" : ` (${r.detail})`}`
      : `${r.outcome === "failed" ? "FAILED" : "not checked"}  ${r.rule}: ${r.detail}`
  )
