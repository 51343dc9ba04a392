/**
 * Sandbox test helpers (a `sk_test_` secret key; live keys get `404`): the customer's side simulated.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { TimeZone } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"
import { MandateRead } from "../Mandates/Api.js"

export const PayerRead = Schema.Struct({
  customerId: Schema.String,
  balance: Schema.Int,
  walletLimit: Schema.NullOr(Schema.Int),
  frozen: Schema.Boolean,
  blockedByRules: Schema.Boolean,
  timeZone: Schema.String
}).annotations({ identifier: "SandboxPayer" })

export const SetPayer = Schema.Struct({
  balance: Schema.optional(
    Schema.Int.pipe(Schema.nonNegative(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER))
  ),
  wallet_limit: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.nonNegative()))),
  frozen: Schema.optional(Schema.Boolean),
  blocked_by_rules: Schema.optional(Schema.Boolean),
  time_zone: Schema.optional(TimeZone)
})

export class TestHelpersApi extends HttpApiGroup.make("testHelpers")
  .add(HttpApiEndpoint.get("payer", "/test-helpers/payer").addSuccess(PayerRead).addError(Doc.NotFound))
  .add(
    HttpApiEndpoint.post("setPayer", "/test-helpers/payer")
      .setPayload(SetPayer)
      .addSuccess(PayerRead)
      .addError(Doc.NotFound)
      .addError(Doc.Unprocessable)
  )
  .add(
    HttpApiEndpoint.post("revokeMandateAsCustomer", "/test-helpers/mandates/:id/revoke-as-customer")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(MandateRead)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandbox test helpers") {}
