/**
 * Handlers of the mandate endpoints: decode into the domain's terms, call the service (the scope and the
 * idempotency key are the endpoints' declarations, applied by `Operation.group`).
 */
import { Auth, Calendar, Errors, Mandates } from "@laari/core"
import { Effect, Option } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import { page } from "../Http/Fields.js"
import * as Operation from "../Http/Operation.js"
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

export const MandatesLive = Effect.map(Mandates.Mandates, (mandates) =>
  Operation.handlers(
    MandatesApi,
    (handlers) =>
      Effect.gen(function* () {
        const config = yield* ServerConfigTag
        return handlers
          .handle("create", ({ payload }) =>
            Operation.tenant.pipe(
              Effect.flatMap((tenant) => mandates.create(tenant, toTerms(payload))),
              Effect.map((m) => Json.created(m, config.checkoutUrl))
            )
          )
          .handle("get", ({ path }) =>
            Operation.tenant.pipe(
              Effect.flatMap((tenant) => mandates.get(tenant, path.id)),
              Effect.map(Json.mandate)
            )
          )
          .handle("list", ({ urlParams }) =>
            Operation.tenant.pipe(
              Effect.flatMap((tenant) =>
                mandates.list(tenant, {
                  status: urlParams.status,
                  reference: urlParams.reference,
                  ...page(urlParams)
                })
              ),
              Effect.map((list) => list.map(Json.mandate))
            )
          )
          .handle("charge", ({ path, payload }) =>
            Operation.tenant.pipe(
              Effect.flatMap((tenant) =>
                mandates.charge(tenant, path.id, {
                  amount: payload.amount,
                  description: payload.description ?? undefined,
                  reference: payload.reference ?? undefined
                })
              ),
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
          .handle("revoke", ({ path }) =>
            Operation.tenant.pipe(
              Effect.flatMap((tenant) => mandates.revoke(tenant, path.id, "MERCHANT")),
              Effect.map((m) => ({ id: m.id, status: m.status, message: "Mandate revoked" }))
            )
          )
      }),
    // A keyed charge locks its mandate right after the key's claim: both go in one round trip.
    {
      ahead: {
        charge: (principal, request) =>
          mandates.lockAhead(Auth.tenantOf(principal), (request.path as { readonly id: string }).id)
      }
    }
  )
)
