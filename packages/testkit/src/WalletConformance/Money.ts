/**
 * Whether money moved exactly once. The protocol shows no balances, but a wallet that starts empty does:
 * after the suite pays it 10 laari it must pay out 10 and not 11. So a repeat that posted again, a refusal
 * that moved something, or a POST after its cancel that posted shows as a wrong refusal or a wrong
 * posting of that wallet's. The wallet ends empty again.
 */
import * as Connector from "@laari/core/wallet/Connector"
import { Effect } from "effect"
import { cancel, type Context, getWallet, notChecked, payment, post, postNew } from "./Context.js"
import * as Http from "./Http.js"

export const movesOnce = (ctx: Context) =>
  Effect.gen(function* () {
    const empty = ctx.setup.empty
    if (empty === undefined) return yield* notChecked("no empty wallet given (--empty)")
    const wallet = yield* getWallet(ctx, empty, `GET the empty wallet ${empty}`)
    if (wallet.status !== "active") return yield* notChecked(`the empty wallet ${empty} is ${wallet.status}`)
    if (wallet.limit !== null && wallet.limit < 11)
      return yield* notChecked(`the empty wallet ${empty} has a limit of ${wallet.limit}, below 11`)
    const rule = "money-moves-once"
    const spend = (amount: number) =>
      payment(ctx, rule, { from: empty, to: ctx.setup.merchant, amount, fee: null })

    const fill = payment(ctx, rule, { to: empty, amount: 10, fee: null })
    yield* postNew(ctx, fill, "POST 10 laari from the payer to the empty wallet")
    yield* Http.expect(
      yield* post(ctx, fill),
      200,
      Connector.Posted,
      "a repeat of the 10 laari to the empty wallet"
    )

    // Holding 10, the wallet cannot pay 11: if it does, the repeat above moved the 10 again.
    const eleven = spend(11)
    ctx.absent.set(eleven.id, "it was refused (insufficient_balance): 11 laari from a wallet holding 10")
    const over = yield* post(ctx, eleven)
    if (over.status === 201)
      return yield* Http.broken(
        `the empty wallet, paid 10 laari once and then the same transfer repeated, paid out 11: the repeat moved the money again (${Http.seen(over)})`
      )
    const refused = yield* Http.expect(over, 422, Connector.Refused, "11 laari from the wallet holding 10")
    yield* Http.check(
      refused.reason === "insufficient_balance",
      () => `11 laari from the wallet holding 10 was refused ${refused.reason}, expected insufficient_balance`
    )

    // A POST after its cancel must not add the 5 it asks for.
    const late = payment(ctx, rule, { to: empty, amount: 5, fee: null })
    ctx.absent.set(late.id, "its POST came after its cancel")
    yield* cancel(ctx, late.id, "cancel an id not sent yet")
    yield* post(ctx, late)

    // Exactly 10 are there: a refusal that moved money leaves less, the late POST more.
    const ten = spend(10)
    const all = yield* post(ctx, ten)
    if (all.status === 422)
      return yield* Http.broken(
        `the wallet paid 10 laari could not pay them out (${Http.seen(all)}): the refused payment of 11 moved money`
      )
    const posted = yield* Http.expect(all, 201, Connector.Posted, "10 laari out of the wallet holding 10")
    ctx.posted.set(ten.id, { request: ten, postedAt: posted.posted_at })
    const one = spend(1)
    ctx.absent.set(one.id, "it was refused (insufficient_balance): 1 laari from a wallet holding nothing")
    const after = yield* post(ctx, one)
    if (after.status === 201)
      return yield* Http.broken(
        `the wallet paid out all it held and still paid 1 laari (${Http.seen(after)}): the POST of 5 laari to it after its cancel moved money`
      )
    yield* Http.expect(after, 422, Connector.Refused, "1 laari from the wallet holding nothing")
    return "a repeat, a refusal and a POST after its cancel moved nothing"
  })
