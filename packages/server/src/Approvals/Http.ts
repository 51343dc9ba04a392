/**
 * Handlers of the customer's approval API.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Calendar, Checkout, type CheckoutSession, Ids, Mandates, Store } from "@laari/core"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { reply, respond } from "../Http/Reply.js"
import * as Json from "../Mandates/Json.js"

export const ApprovalsLive = HttpApiBuilder.group(Api, "approvals", (handlers) =>
  Effect.gen(function* () {
    const mandates = yield* Mandates.Mandates
    const merchants = yield* Store.Merchants
    const checkout = yield* Checkout.Checkout

    const sessionForPayment = (s: CheckoutSession.CheckoutSession) =>
      Effect.map(merchants.get(s.merchantId), (merchant) =>
        reply(200, {
          id: s.id,
          status: s.status,
          mode: s.mode,
          merchantName: merchant?.name ?? "",
          title: s.title,
          description: s.description,
          amount: s.amount,
          currency: "MVR",
          planName: s.price?.name ?? null,
          interval: s.price?.interval ?? null,
          intervalCount: s.price?.intervalCount ?? null,
          returnUrl: s.returnUrl,
          expiresAt: Calendar.formatMaldives(s.expiresAt),
          subscriptionId: s.subscriptionId
        })
      )
    return handlers
      .handle("mandate", ({ path }) =>
        respond(
          Effect.flatMap(mandates.forApproval(path.id), (m) =>
            Effect.map(merchants.get(m.merchantId), (merchant) => ({ m, merchantName: merchant?.name ?? "" }))
          ),
          ({ m, merchantName }) =>
            reply(200, {
              id: m.id,
              status: m.status,
              merchantName,
              title: m.title,
              description: m.description,
              currency: "MVR",
              perChargeCap: m.perChargeCap,
              periodCap: m.periodCap,
              period: m.period,
              expiresAt: Calendar.formatMaldives(m.expiresAt),
              setupExpiresAt: Calendar.formatMaldives(m.setupExpiresAt),
              returnUrl: m.returnUrl
            })
        )
      )
      .handle("challenge", ({ path, payload }) =>
        respond(mandates.requestApproval(path.id, payload.phone.trim()), (c) =>
          reply(200, { challenge_id: c.id, expires_at: Calendar.formatMaldives(c.expiresAt) })
        )
      )
      .handle("approve", ({ path, payload }) =>
        respond(mandates.approve(path.id, Ids.ChallengeId.make(payload.challenge_id), payload.otp), (m) =>
          reply(200, Json.mandate(m))
        )
      )
      .handle("decline", ({ path, payload }) =>
        respond(mandates.decline(path.id, Ids.ChallengeId.make(payload.challenge_id), payload.otp), (m) =>
          reply(200, Json.mandate(m))
        )
      )
      .handle("checkout", ({ path }) =>
        respond(Effect.flatMap(checkout.forPayment(path.id), sessionForPayment), (r) => r)
      )
      .handle("checkoutChallenge", ({ path, payload }) =>
        respond(checkout.requestPayment(path.id, payload.phone.trim()), (c) =>
          reply(200, { challenge_id: c.id, expires_at: Calendar.formatMaldives(c.expiresAt) })
        )
      )
      .handle("checkoutPay", ({ path, payload }) =>
        respond(
          Effect.flatMap(
            checkout.pay(path.id, Ids.ChallengeId.make(payload.challenge_id), payload.otp),
            (settled) => sessionForPayment(settled.session)
          ),
          (r) => r
        )
      )
  })
)
