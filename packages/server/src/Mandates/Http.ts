/**
 * Handlers of the mandate endpoints: check the scope, decode into the domain's terms, call the service.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Auth, Calendar, Mandates } from "@laari/core"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { ServerConfigTag } from "../Config.js"
import { idempotent } from "../Http/Idempotent.js"
import { page } from "../Http/Fields.js"
import { reply, respond, run } from "../Http/Reply.js"
import { withScope } from "../Http/Security.js"
import type { CreateMandate } from "./Api.js"
import * as Json from "./Json.js"

const toTerms = (p: typeof CreateMandate.Type) => ({
  reference: p.reference,
  title: p.title,
  description: p.description ?? null,
  perChargeCap: p.per_charge_cap,
  periodCap: p.period_cap ?? null,
  period: p.period ?? null,
  expiresAt: p.expires_at == null ? null : Option.getOrNull(Calendar.parseOffsetDateTime(p.expires_at)),
  returnUrl: p.return_url ?? null
})

export const MandatesLive = HttpApiBuilder.group(Api, "mandates", (handlers) =>
  Effect.gen(function* () {
    const mandates = yield* Mandates.Mandates
    const config = yield* ServerConfigTag
    return handlers
      .handle("create", ({ payload }) =>
        withScope("mandates:write", (principal) =>
          idempotent(
            principal,
            payload,
            run(mandates.create(Auth.tenantOf(principal), toTerms(payload)), (m) =>
              reply(201, Json.created(m, config.checkoutUrl))
            )
          )
        )
      )
      .handle("get", ({ path }) =>
        withScope("mandates:write", (principal) =>
          respond(mandates.get(Auth.tenantOf(principal), path.id), (m) => reply(200, Json.mandate(m)))
        )
      )
      .handle("list", ({ urlParams }) =>
        withScope("mandates:write", (principal) =>
          respond(
            mandates.list(Auth.tenantOf(principal), {
              status: urlParams.status,
              reference: urlParams.reference,
              ...page(urlParams)
            }),
            (list) => reply(200, list.map(Json.mandate))
          )
        )
      )
      .handle("charge", ({ path, payload }) =>
        withScope("payments:write", (principal) =>
          idempotent(
            principal,
            payload,
            run(
              mandates
                .charge(Auth.tenantOf(principal), path.id, {
                  amount: payload.amount,
                  description: payload.description ?? undefined,
                  reference: payload.reference ?? undefined
                })
                .pipe(
                  // On the charge endpoint a missing mandate is the refusal MANDATE_NOT_FOUND, with its code.
                  Effect.catchTag("MandateNotFound", () =>
                    Effect.fail(Mandates.ChargeRefused.of("MANDATE_NOT_FOUND"))
                  ),
                  Effect.catchTag("ServiceUnavailable", () =>
                    Effect.fail(Mandates.ChargeRefused.of("SERVICE_UNAVAILABLE"))
                  )
                ),
              (c) => reply(201, Json.charge(c))
            )
          )
        )
      )
      .handle("revoke", ({ path }) =>
        withScope("mandates:write", (principal) =>
          idempotent(
            principal,
            undefined,
            run(mandates.revoke(Auth.tenantOf(principal), path.id, "MERCHANT"), (m) =>
              reply(200, { id: m.id, status: m.status, message: "Mandate revoked" })
            )
          )
        )
      )
  })
)
