/**
 * Handlers of the refund endpoints: name the one payment, call the service. A refund pending in the
 * wallet provider's core ends `Idempotent.Later`: a retry under its key answers its movement's outcome.
 */
import { Auth, Calendar, Errors, Refund, Refunds, RemoteLedger } from "@laari/core"
import { Effect } from "effect"
import { page } from "../Http/Fields.js"
import * as Idempotent from "../Http/Idempotent.js"
import * as Operation from "../Http/Operation.js"
import { type CreateRefund, type RefundRead, RefundsApi, selectorFields } from "./Api.js"

export const json = (r: Refund.Refund): typeof RefundRead.Type => {
  const source = Refund.sourceFields(r.source)
  return {
    id: r.id,
    amount: r.amount,
    currency: "MVR",
    status: "SUCCEEDED",
    chargeId: source.charge_id,
    qrPaymentId: source.qr_payment_id,
    invoiceId: source.invoice_id,
    reason: r.reason,
    reference: r.reference,
    description: r.description,
    createdAt: Calendar.formatMaldives(r.createdAt)
  }
}

/** The one payment the body names (by id, or by reference), or the refusal naming the fields. */
const sourceOf = (p: typeof CreateRefund.Type): Effect.Effect<Refund.Selector, Errors.InvalidRequest> => {
  const given = selectorFields.filter((f) => p[f] !== undefined)
  if (given.length === 1) {
    const field = given[0]!
    const value = p[field]!
    return Effect.succeed(
      field === "charge_reference"
        ? { kind: "charge", reference: value }
        : field === "qr_payment_reference"
          ? { kind: "qr_payment", reference: value }
          : { kind: field.slice(0, -3) as Refund.SourceKind, id: value }
    )
  }
  const message =
    given.length === 0
      ? `one of ${selectorFields.join(", ")} is required`
      : `only one of ${given.join(", ")} may be given`
  return Effect.fail(
    Errors.InvalidRequest.of(
      (given.length === 0 ? selectorFields : given).map((field) => ({ field, message }))
    )
  )
}

export const RefundsLive = Effect.map(Refunds.Refunds, (refunds) =>
  Operation.handlers(
    RefundsApi,
    (handlers) =>
      handlers
        .handle("create", ({ payload }) =>
          Effect.all([Operation.tenant, sourceOf(payload)]).pipe(
            Effect.flatMap(([tenant, source]) =>
              refunds.start(tenant, {
                source,
                amount: payload.amount,
                reason: payload.reason ?? undefined,
                reference: payload.reference ?? undefined,
                description: payload.description ?? undefined
              })
            ),
            // Pending in the wallet provider's core: the call goes out once the movement is committed.
            Effect.flatMap(
              (step): Effect.Effect<Refund.Refund, Idempotent.Later> =>
                step._tag === "settled"
                  ? Effect.succeed(step.refund)
                  : Effect.fail(
                      new Idempotent.Later(
                        step.movement.id,
                        RemoteLedger.answeredBy(refunds.steps(step.movement), Effect.map(json))
                      )
                    )
            ),
            Effect.map(json)
          )
        )
        .handle("get", ({ path }) =>
          Operation.tenant.pipe(
            Effect.flatMap((tenant) => refunds.get(tenant, path.id)),
            Effect.map(json)
          )
        )
        .handle("list", ({ urlParams }) =>
          Operation.tenant.pipe(
            Effect.flatMap((tenant) =>
              refunds.list(tenant, {
                chargeId: urlParams.charge_id,
                qrPaymentId: urlParams.qr_payment_id,
                invoiceId: urlParams.invoice_id,
                ...page(urlParams)
              })
            ),
            Effect.map((list) => list.map(json))
          )
        ),
    {
      resume: {
        create: (principal, movementId) =>
          Effect.map(refunds.outcome(Auth.tenantOf(principal), movementId), json)
      }
    }
  )
)
