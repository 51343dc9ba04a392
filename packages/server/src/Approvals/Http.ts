/**
 * Handlers of the customer's approval API.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Approvals, Calendar, Checkout, type CheckoutSession, Ids, Mandates, Reads } from "@laari/core"
import { Effect } from "effect"
import * as Operation from "../Http/Operation.js"
import { ApprovalsApi } from "./Api.js"
import * as Json from "../Mandates/Json.js"

/** A capped approval answers `429` with `Retry-After`: the error's wait, as a header of the response. */
const retryAfter = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tapError(effect, (e) =>
    e instanceof Approvals.ApprovalLimited
      ? HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(e.retryAfterSeconds)))
        )
      : Effect.void
  )

const challengeIssued = (c: {
  readonly id: Ids.ChallengeId
  readonly expiresAt: Parameters<typeof Calendar.formatMaldives>[0]
}) => ({
  challenge_id: c.id,
  expires_at: Calendar.formatMaldives(c.expiresAt)
})

export const ApprovalsLive = Operation.handlers(ApprovalsApi, (handlers) =>
  Effect.gen(function* () {
    const mandates = yield* Mandates.Mandates
    const reads = yield* Reads.Reads
    const checkout = yield* Checkout.Checkout

    const sessionForPayment = (s: CheckoutSession.CheckoutSession) =>
      Effect.map(reads.merchant(s.merchantId), (merchant) => ({
        id: s.id,
        status: s.status,
        mode: s.mode,
        merchantName: merchant?.name ?? "",
        title: s.title,
        description: s.description,
        amount: s.amount,
        currency: "MVR" as const,
        planName: s.price?.name ?? null,
        interval: s.price?.interval ?? null,
        intervalCount: s.price?.intervalCount ?? null,
        returnUrl: s.returnUrl,
        expiresAt: Calendar.formatMaldives(s.expiresAt),
        subscriptionId: s.subscriptionId
      }))
    return handlers
      .handle("mandate", ({ path }) =>
        Effect.flatMap(mandates.forApproval(path.id), (m) =>
          Effect.map(reads.merchant(m.merchantId), (merchant) => ({
            id: m.id,
            status: m.status,
            merchantName: merchant?.name ?? "",
            title: m.title,
            description: m.description,
            currency: "MVR" as const,
            perChargeCap: m.perChargeCap,
            periodCap: m.periodCap,
            period: m.period,
            expiresAt: Calendar.formatMaldives(m.expiresAt),
            setupExpiresAt: Calendar.formatMaldives(m.setupExpiresAt),
            returnUrl: m.returnUrl
          }))
        )
      )
      .handle("challenge", ({ path, payload }) =>
        retryAfter(mandates.requestApproval(path.id, payload.phone.trim()).pipe(Effect.map(challengeIssued)))
      )
      .handle("approve", ({ path, payload }) =>
        retryAfter(
          mandates
            .approve(path.id, Ids.ChallengeId.make(payload.challenge_id), payload.otp)
            .pipe(Effect.map(Json.mandate))
        )
      )
      .handle("decline", ({ path, payload }) =>
        retryAfter(
          mandates
            .decline(path.id, Ids.ChallengeId.make(payload.challenge_id), payload.otp)
            .pipe(Effect.map(Json.mandate))
        )
      )
      .handle("checkout", ({ path }) => Effect.flatMap(checkout.forPayment(path.id), sessionForPayment))
      .handle("checkoutChallenge", ({ path, payload }) =>
        retryAfter(checkout.requestPayment(path.id, payload.phone.trim()).pipe(Effect.map(challengeIssued)))
      )
      .handle("checkoutPay", ({ path, payload }) =>
        retryAfter(
          Effect.flatMap(
            checkout.pay(path.id, Ids.ChallengeId.make(payload.challenge_id), payload.otp),
            (settled) => sessionForPayment(settled.session)
          )
        )
      )
  })
)
