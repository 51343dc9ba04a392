/**
 * The mandate endpoints of spec 4.1.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Mandate } from "@laari/core"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { OffsetDateTime, optionalNullable, Paging } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"

export const MandateRead = Schema.Struct({
  id: Schema.String,
  reference: Schema.String,
  status: Mandate.Status,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  currency: Schema.Literal("MVR"),
  perChargeCap: Schema.Int,
  periodCap: Schema.NullOr(Schema.Int),
  period: Schema.NullOr(Schema.Literal("MONTH")),
  periodKey: Schema.NullOr(Schema.String),
  periodCharged: Schema.Int,
  setupExpiresAt: Schema.String,
  expiresAt: Schema.String,
  approvedAt: Schema.NullOr(Schema.String),
  revokedAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "Mandate" })

export const MandateCreated = Schema.Struct({
  id: Schema.String,
  reference: Schema.String,
  status: Mandate.Status,
  url: Schema.String
}).annotations({ identifier: "MandateCreated" })

export const ChargeRead = Schema.Struct({
  id: Schema.String,
  mandateId: Schema.String,
  amount: Schema.Int,
  currency: Schema.Literal("MVR"),
  status: Schema.Literal("SUCCEEDED"),
  description: Schema.String,
  reference: Schema.String,
  fee: Schema.Int,
  netAmount: Schema.Int,
  periodKey: Schema.String,
  periodCharged: Schema.Int,
  createdAt: Schema.String
}).annotations({ identifier: "MandateCharge" })

export const CreateMandate = Schema.Struct({
  reference: Schema.String,
  title: Schema.String,
  per_charge_cap: Schema.Number,
  description: optionalNullable(Schema.String),
  period_cap: optionalNullable(Schema.Number),
  period: optionalNullable(Schema.Literal("MONTH")),
  expires_at: optionalNullable(OffsetDateTime),
  return_url: optionalNullable(Schema.String)
})

export const CreateCharge = Schema.Struct({
  amount: Schema.Number,
  description: optionalNullable(Schema.String),
  reference: optionalNullable(Schema.String)
})

export const Revoked = Schema.Struct({ id: Schema.String, status: Mandate.Status, message: Schema.String })

const IdPath = Schema.Struct({
  id: Schema.String.annotations({ description: "The mandate UUID or its reference" })
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
          reference: Schema.optional(Schema.String),
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
