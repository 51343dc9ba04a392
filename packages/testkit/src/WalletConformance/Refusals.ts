/**
 * The refusal reasons, one rule each, decided as laari's built-in ledger decides them (frozen, then
 * blocked, then the limit, then the balance); and a reversal the merchant's wallet cannot cover, which
 * laari answers as the refund the merchant's balance does not allow. Each needs a wallet in that state,
 * which only the provider can make: without it the rule is not checked.
 */
import * as Connector from "@laari/core/wallet/Connector"
import { Effect } from "effect"
import { type Context, getWallet, notChecked, payment, post } from "./Context.js"
import * as Http from "./Http.js"

type Role = "frozen" | "blocked" | "limited" | "empty"

/** A payment of `amount` from the wallet, to the merchant. */
const paymentFrom = (ctx: Context, id: string, amount: number, rule: string) =>
  payment(ctx, rule, { from: id, amount, fee: null })

const refusal =
  (
    role: Role,
    reason: Connector.RefusalReason,
    /** The amount to move from the wallet, or why the wallet cannot be used. */
    amount: (wallet: Connector.Wallet) => number | string,
    request: (
      ctx: Context,
      id: string,
      amount: number,
      rule: string
    ) => Connector.TransferRequest = paymentFrom,
    kind = "payment"
  ) =>
  (ctx: Context) =>
    Effect.gen(function* () {
      const id = ctx.setup[role]
      if (id === undefined) return yield* notChecked(`no ${role} wallet given (--${role})`)
      const wallet = yield* getWallet(ctx, id, `GET the ${role} wallet ${id}`)
      const pay = amount(wallet)
      if (typeof pay === "string") return yield* notChecked(`the wallet given as ${role}, ${id}, ${pay}`)
      const sent = request(ctx, id, pay, `refusal-${reason}`)
      ctx.absent.set(sent.id, `it was refused (${reason}), from the ${role} wallet`)
      const what = `a ${kind} of ${pay} laari from the ${role} wallet`
      const answer = yield* post(ctx, sent)
      const refused = yield* Http.expect(answer, 422, Connector.Refused, what)
      yield* Http.check(
        refused.reason === reason && refused.id === sent.id,
        () => `${what}: refused ${refused.reason}, expected ${reason}`
      )
      const again = yield* post(ctx, sent)
      yield* Http.check(
        again.status === 422 && JSON.stringify(again.body) === JSON.stringify(answer.body),
        () => `a repeat of ${what}: ${Http.seen(again)}, expected the first answer 422 ${answer.text}`
      )
      return `refused ${reason}`
    })

export const frozen = refusal("frozen", "wallet_frozen", (w) =>
  w.status === "frozen" ? 1 : `is ${w.status}, not frozen`
)

export const blocked = refusal("blocked", "blocked_by_rules", (w) =>
  w.status === "blocked" ? 1 : `is ${w.status}, not blocked`
)

// Above the limit: the limit is decided before the balance, so the wallet's balance does not matter.
export const limited = refusal("limited", "wallet_limit", (w) =>
  w.status !== "active" ? `is ${w.status}, not active` : w.limit === null ? "has no limit" : w.limit + 1
)

// One laari from a wallet holding none; within its limit, which is decided first.
export const empty = refusal("empty", "insufficient_balance", (w) =>
  w.status !== "active" ? `is ${w.status}, not active` : w.limit === 0 ? "has a limit of 0" : 1
)

// A refund the merchant cannot cover: laari answers it `402 INSUFFICIENT_MERCHANT_BALANCE` only when the
// core says `insufficient_balance`; any other reason would tell the merchant something untrue.
export const reversalBalance = refusal(
  "empty",
  "insufficient_balance",
  (w) => (w.status !== "active" ? `is ${w.status}, not active` : 1),
  (ctx, id, amount, rule) =>
    payment(ctx, rule, { from: id, to: ctx.setup.payer, amount, fee: null, kind: "reversal" }),
  "reversal"
)
