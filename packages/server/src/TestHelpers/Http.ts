/**
 * Handlers of the sandbox test helpers (sandbox keys only, as `TestHelpersApi` declares).
 */
import {
  Auth,
  Checkout,
  CheckoutPayments,
  type Ids,
  Mandates,
  Merchants,
  QrCodes,
  QrPayments,
  RemoteLedger,
  Subscriptions
} from "@laari/core"
import { Effect } from "effect"
import * as Idempotent from "../Http/Idempotent.js"
import * as Problems from "../Http/Problems.js"
import * as Operation from "../Http/Operation.js"
import { TestHelpersApi } from "./Api.js"
import * as MandateJson from "../Mandates/Json.js"
import * as OpsJson from "../Ops/Json.js"
import * as QrJson from "../QrCodes/Json.js"
import * as CheckoutJson from "../Checkout/Json.js"
import { ServerConfigTag } from "../Platform/Config.js"
import * as SubscriptionJson from "../Subscriptions/Json.js"
import { Directory } from "../Platform/Directory.js"

/** A checkout session's settlement as the pay helper answers it. */
const settlementJson = (checkoutUrl: string) => (settled: Checkout.Settlement) => ({
  session: CheckoutJson.session(settled.session, checkoutUrl),
  subscription: settled.subscription === null ? null : SubscriptionJson.subscription(settled.subscription)
})

export const TestHelpersLive = Effect.map(
  Effect.all([QrPayments.QrPayments, CheckoutPayments.CheckoutPayments, ServerConfigTag]),
  ([qrPayments, checkoutPayments, { checkoutUrl }]) =>
    Operation.handlers(
      TestHelpersApi,
      (handlers) =>
        Effect.gen(function* () {
          const directory = yield* Directory
          const merchants = yield* Merchants.Merchants
          const mandates = yield* Mandates.Mandates
          const qrCodes = yield* QrCodes.QrCodes
          const checkout = yield* Checkout.Checkout
          const subscriptions = yield* Subscriptions.Subscriptions
          const config = yield* ServerConfigTag

          /** The merchant's sandbox payer wallet. */
          const sandboxPayer = (principal: Auth.Principal) =>
            Effect.flatMap(merchants.get(principal.merchantId), (m) =>
              m === undefined
                ? Effect.dieMessage("the key's merchant is gone")
                : Effect.succeed(m.sandboxPayer)
            )

          const payerRead =
            (customerId: Ids.CustomerId) => (account: Parameters<typeof OpsJson.payer>[0] | undefined) =>
              account === undefined
                ? Effect.fail(new Problems.NotFound({ message: "Sandbox payer not found" }))
                : Effect.succeed({ customerId, ...OpsJson.payer(account) })

          const settledJson = settlementJson(config.checkoutUrl)

          return handlers
            .handle("payer", () =>
              Effect.flatMap(Operation.principal, (principal) =>
                Effect.flatMap(sandboxPayer(principal), (id) =>
                  Effect.flatMap(directory.payer(id), payerRead(id))
                )
              )
            )
            .handle("setPayer", ({ payload }) =>
              Effect.flatMap(Operation.principal, (principal) =>
                Effect.flatMap(sandboxPayer(principal), (id) =>
                  Effect.flatMap(
                    directory.setPayer(id, {
                      balance: payload.balance,
                      limit: payload.wallet_limit,
                      frozen: payload.frozen,
                      blockedByRules: payload.blocked_by_rules,
                      timeZone: payload.time_zone
                    }),
                    payerRead(id)
                  )
                )
              )
            )
            .handle("revokeMandateAsCustomer", ({ path }) =>
              Effect.flatMap(Operation.principal, (principal) =>
                Effect.gen(function* () {
                  // Only this merchant's sandbox mandates: another merchant's is answered as missing.
                  const mandate = yield* mandates.get(Auth.tenantOf(principal), path.id)
                  if (mandate.customerId === null) return yield* new Mandates.MandateNotRevocable()
                  return MandateJson.mandate(yield* mandates.revokeAsCustomer(mandate.customerId, mandate.id))
                })
              )
            )
            .handle("payQrCode", ({ payload }) =>
              Effect.flatMap(Operation.principal, (principal) =>
                Effect.flatMap(sandboxPayer(principal), (customerId) =>
                  qrCodes.start({
                    environment: "test",
                    customerId,
                    payload: payload.payload,
                    amount: payload.amount ?? null
                  })
                ).pipe(
                  // Pending in the wallet provider's core: the call goes out once the movement is committed.
                  Effect.flatMap((step) =>
                    step._tag === "settled"
                      ? Effect.succeed(QrJson.payment(step.payment))
                      : Effect.fail(
                          new Idempotent.Later(
                            step.movement.id,
                            RemoteLedger.answeredBy(
                              qrPayments.steps(step.movement),
                              Effect.map(QrJson.payment)
                            )
                          )
                        )
                  )
                )
              )
            )
            .handle("payCheckoutSession", ({ path }) =>
              Effect.flatMap(Operation.principal, (principal) =>
                Effect.gen(function* () {
                  // Only this merchant's sandbox sessions: another merchant's is answered as missing.
                  const session = yield* checkout.get(Auth.tenantOf(principal), path.id)
                  const step = yield* checkout.start(session.id, yield* sandboxPayer(principal))
                  if (step._tag === "settled") return settledJson(step.settlement)
                  return yield* new Idempotent.Later(
                    step.movement.id,
                    RemoteLedger.answeredBy(checkoutPayments.steps(step.movement), Effect.map(settledJson))
                  )
                })
              )
            )
            .handle("cancelSubscriptionAsCustomer", ({ path }) =>
              Effect.flatMap(Operation.principal, (principal) =>
                Effect.gen(function* () {
                  const subscription = yield* subscriptions.get(Auth.tenantOf(principal), path.id)
                  return SubscriptionJson.subscription(
                    yield* subscriptions.cancelAsPayer(subscription.customerId, subscription.id)
                  )
                })
              )
            )
        }),
      // A retry under the key of a payment left pending in the core: its outcome now.
      {
        resume: {
          payQrCode: (principal, movementId) =>
            Effect.map(qrPayments.outcome(Auth.tenantOf(principal), movementId), QrJson.payment),
          payCheckoutSession: (principal, movementId) =>
            Effect.map(
              checkoutPayments.outcome(Auth.tenantOf(principal), movementId),
              settlementJson(checkoutUrl)
            )
        }
      }
    )
)
