/**
 * Handlers of the customer's approval API.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Calendar, Ids, Mandates, Store } from "@laari/core"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { reply, respond } from "../Http/Reply.js"
import * as Json from "../Mandates/Json.js"

export const ApprovalsLive = HttpApiBuilder.group(Api, "approvals", (handlers) =>
  Effect.gen(function* () {
    const mandates = yield* Mandates.Mandates
    const merchants = yield* Store.Merchants
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
  })
)
