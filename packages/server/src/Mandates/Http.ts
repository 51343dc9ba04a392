/**
 * Handlers of the mandate endpoints: decode into the domain's terms, call the service (the scope and the
 * idempotency key are the endpoints' declarations, applied by `Operation.group`).
 */
import { Auth, Calendar, Errors, type Mandate, MandateCharges, Mandates, RemoteLedger } from "@laari/core"
import { Effect, Option } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import { page } from "../Http/Fields.js"
import * as Idempotent from "../Http/Idempotent.js"
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

/**
 * A charge's outcome as the endpoint answers it: the charge, or its refusal with its code (a missing
 * mandate is the refusal MANDATE_NOT_FOUND; the database unavailable, SERVICE_UNAVAILABLE); an outcome not
 * known (a lost commit, a wallet core that did not answer) keeps its own code, whose advice is to retry
 * with the same key.
 */
const answered = <E, R>(
  outcome: Effect.Effect<Mandate.Charge, E | Mandates.MandateNotFound | Errors.ServiceUnavailable, R>
) =>
  outcome.pipe(
    Effect.map(Json.charge),
    Effect.catchTag("MandateNotFound", () => Effect.fail(Mandates.ChargeRefused.of("MANDATE_NOT_FOUND"))),
    Effect.catchTag("ServiceUnavailable", (e) =>
      Effect.fail(e instanceof Errors.OutcomeUnknown ? e : Mandates.ChargeRefused.of("SERVICE_UNAVAILABLE"))
    )
  )

export const MandatesLive = Effect.map(
  Effect.zip(Mandates.Mandates, MandateCharges.MandateCharges),
  ([mandates, charging]) =>
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
                  charging.start(tenant, path.id, {
                    amount: payload.amount,
                    description: payload.description ?? undefined,
                    reference: payload.reference ?? undefined
                  })
                ),
                // Pending in the wallet provider's core: the call goes out once the movement is committed.
                Effect.flatMap(
                  (step): Effect.Effect<Mandate.Charge, Mandates.ChargeRefused | Idempotent.Later> =>
                    step._tag === "settled"
                      ? step.outcome
                      : Effect.fail(
                          new Idempotent.Later(
                            step.movement.id,
                            RemoteLedger.answeredBy(charging.steps(step.movement), answered)
                          )
                        )
                ),
                answered
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
        },
        resume: {
          charge: (principal, movementId) => answered(charging.outcome(Auth.tenantOf(principal), movementId))
        }
      }
    )
)
