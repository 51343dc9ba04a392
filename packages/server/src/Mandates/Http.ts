/**
 * Handlers of the mandate endpoints: check the scope, decode into the domain's terms, call the service.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Auth, Calendar, Errors, Mandates } from "@laari/core"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { ServerConfigTag } from "../Config.js"
import { page } from "../Http/Fields.js"
import { idempotent } from "../Http/Idempotent.js"
import { withScope } from "../Http/Security.js"
import { type CreateMandate, MandatesApi } from "./Api.js"
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
      .handle("create", ({ headers, payload }) =>
        withScope("mandates:write", (principal) =>
          idempotent(
            MandatesApi.endpoints.create,
            { principal, key: headers["idempotency-key"], payload },
            mandates
              .create(Auth.tenantOf(principal), toTerms(payload))
              .pipe(Effect.map((m) => Json.created(m, config.checkoutUrl)))
          )
        )
      )
      .handle("get", ({ path }) =>
        withScope("mandates:write", (principal) =>
          mandates.get(Auth.tenantOf(principal), path.id).pipe(Effect.map(Json.mandate))
        )
      )
      .handle("list", ({ urlParams }) =>
        withScope("mandates:write", (principal) =>
          mandates
            .list(Auth.tenantOf(principal), {
              status: urlParams.status,
              reference: urlParams.reference,
              ...page(urlParams)
            })
            .pipe(Effect.map((list) => list.map(Json.mandate)))
        )
      )
      .handle("charge", ({ headers, path, payload }) =>
        withScope("payments:write", (principal) =>
          idempotent(
            MandatesApi.endpoints.charge,
            { principal, key: headers["idempotency-key"], payload },
            mandates
              .charge(Auth.tenantOf(principal), path.id, {
                amount: payload.amount,
                description: payload.description ?? undefined,
                reference: payload.reference ?? undefined
              })
              .pipe(
                Effect.map(Json.charge),
                // On the charge endpoint a missing mandate is the refusal MANDATE_NOT_FOUND, with its code.
                Effect.catchTag("MandateNotFound", () =>
                  Effect.fail(Mandates.ChargeRefused.of("MANDATE_NOT_FOUND"))
                ),
                // A commit of unknown outcome keeps its own code: its advice is to retry with the same key.
                Effect.catchTag("ServiceUnavailable", (e) =>
                  Effect.fail(
                    e instanceof Errors.OutcomeUnknown ? e : Mandates.ChargeRefused.of("SERVICE_UNAVAILABLE")
                  )
                )
              )
          )
        )
      )
      .handle("revoke", ({ headers, path }) =>
        withScope("mandates:write", (principal) =>
          idempotent(
            MandatesApi.endpoints.revoke,
            { principal, key: headers["idempotency-key"], payload: undefined },
            mandates
              .revoke(Auth.tenantOf(principal), path.id, "MERCHANT")
              .pipe(Effect.map((m) => ({ id: m.id, status: m.status, message: "Mandate revoked" })))
          )
        )
      )
  })
)
