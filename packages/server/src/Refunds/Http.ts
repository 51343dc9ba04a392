/**
 * Handlers of the refund endpoints: check the scope, name the one payment, call the service.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Auth, Calendar, Errors, Refund, Refunds } from "@laari/core"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { page } from "../Http/Fields.js"
import { idempotent } from "../Http/Idempotent.js"
import { withScope } from "../Http/Security.js"
import { type CreateRefund, RefundsApi, type RefundRead, selectorFields } from "./Api.js"

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

export const RefundsLive = HttpApiBuilder.group(Api, "refunds", (handlers) =>
  Effect.gen(function* () {
    const refunds = yield* Refunds.Refunds
    return handlers
      .handle("create", ({ headers, payload }) =>
        withScope("payments:write", (principal) =>
          idempotent(
            RefundsApi.endpoints.create,
            { principal, key: headers["idempotency-key"], payload },
            Effect.flatMap(sourceOf(payload), (source) =>
              refunds.create(Auth.tenantOf(principal), {
                source,
                amount: payload.amount,
                reason: payload.reason ?? undefined,
                reference: payload.reference ?? undefined,
                description: payload.description ?? undefined
              })
            ).pipe(Effect.map(json))
          )
        )
      )
      .handle("get", ({ path }) =>
        withScope("payments:write", (principal) =>
          refunds.get(Auth.tenantOf(principal), path.id).pipe(Effect.map(json))
        )
      )
      .handle("list", ({ urlParams }) =>
        withScope("payments:write", (principal) =>
          refunds
            .list(Auth.tenantOf(principal), {
              chargeId: urlParams.charge_id,
              qrPaymentId: urlParams.qr_payment_id,
              invoiceId: urlParams.invoice_id,
              ...page(urlParams)
            })
            .pipe(Effect.map((list) => list.map(json)))
        )
      )
  })
)
