/**
 * The mandate endpoints of spec 4.1.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Fields, Mandate, Money } from "@laari/core"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { Body, OffsetDateTime, optionalNullable, Paging, Text } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"

export const MandateRead = Schema.Struct({
  id: Text,
  reference: Text,
  status: Mandate.Status,
  title: Text,
  description: Schema.NullOr(Text),
  currency: Schema.Literal("MVR"),
  perChargeCap: Schema.Int,
  periodCap: Schema.NullOr(Schema.Int),
  period: Schema.NullOr(Schema.Literal("MONTH")),
  periodKey: Schema.NullOr(Text),
  periodCharged: Schema.Int,
  setupExpiresAt: Text,
  expiresAt: Text,
  approvedAt: Schema.NullOr(Text),
  revokedAt: Schema.NullOr(Text),
  createdAt: Text
}).annotations({ identifier: "Mandate" })

export const MandateCreated = Schema.Struct({
  id: Text,
  reference: Text,
  status: Mandate.Status,
  url: Text
}).annotations({ identifier: "MandateCreated" })

export const ChargeRead = Schema.Struct({
  id: Text,
  mandateId: Text,
  amount: Schema.Int,
  currency: Schema.Literal("MVR"),
  status: Schema.Literal("SUCCEEDED"),
  description: Text,
  reference: Text,
  fee: Schema.Int,
  netAmount: Schema.Int,
  periodKey: Text,
  periodCharged: Schema.Int,
  createdAt: Text
}).annotations({ identifier: "MandateCharge" })

/** Field rules are core's (`Fields`, `Money`, `Mandate`); cross-field ones are `Mandate.validateTerms`. */
export const CreateMandate = Body({
  reference: Fields.Reference,
  title: Fields.Title,
  per_charge_cap: Money.Amount,
  description: optionalNullable(Fields.Description),
  // At least `per_charge_cap`, which only `Mandate.validateTerms` can see.
  period_cap: optionalNullable(Money.Chargeable),
  period: optionalNullable(Mandate.Period),
  expires_at: optionalNullable(OffsetDateTime),
  return_url: optionalNullable(Text)
})

export const CreateCharge = Body({
  amount: Mandate.ChargeAmount,
  description: optionalNullable(Fields.Description),
  reference: optionalNullable(Fields.Reference)
})

export const Revoked = Schema.Struct({ id: Text, status: Mandate.Status, message: Text })

const IdPath = Schema.Struct({
  id: Text.annotations({ description: "The mandate UUID or its reference" })
})

export class MandatesApi extends HttpApiGroup.make("mandates")
  .add(
    HttpApiEndpoint.post("create", "/mandates")
      .setPayload(CreateMandate)
      .setHeaders(Doc.IdempotencyHeaders)
      .addSuccess(MandateCreated, { status: 201 })
      .addError(Doc.Forbidden)
      .addError(Doc.Conflict)
      .addError(Doc.Unprocessable)
      .annotate(OpenApi.Summary, "Create a mandate (scope mandates:write)")
  )
  .add(
    HttpApiEndpoint.get("get", "/mandates/:id")
      .setPath(IdPath)
      .addSuccess(MandateRead)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .annotate(OpenApi.Summary, "Fetch a mandate by id or reference (scope mandates:write)")
  )
  .add(
    HttpApiEndpoint.get("list", "/mandates")
      .setUrlParams(
        Schema.Struct({
          status: Schema.optional(Mandate.Status),
          reference: Schema.optional(Text),
          ...Paging
        })
      )
      .addSuccess(Schema.Array(MandateRead))
      .addError(Doc.Forbidden)
      .addError(Doc.Unprocessable)
      .annotate(OpenApi.Summary, "List mandates, newest first (scope mandates:write)")
  )
  .add(
    HttpApiEndpoint.post("charge", "/mandates/:id/charges")
      .setPath(IdPath)
      .setPayload(CreateCharge)
      .setHeaders(Doc.IdempotencyHeaders)
      .addSuccess(ChargeRead, { status: 201 })
      .addError(Doc.PaymentRequired)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .addError(Doc.Unprocessable)
      .addError(Doc.Unavailable)
      .annotate(OpenApi.Summary, "Charge a mandate (scope payments:write)")
  )
  .add(
    HttpApiEndpoint.post("revoke", "/mandates/:id/revoke")
      .setPath(IdPath)
      .setHeaders(Doc.IdempotencyHeaders)
      .addSuccess(Revoked)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .annotate(OpenApi.Summary, "Revoke a mandate (scope mandates:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Mandates") {}
