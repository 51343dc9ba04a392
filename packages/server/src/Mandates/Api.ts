/**
 * The mandate endpoints: create, read, list, charge and revoke.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Fields, Ids, Mandate, Money } from "@laari/core"
import { Schema } from "effect"
import {
  Body,
  IdOrReference,
  OffsetDateTime,
  optionalNullable,
  Paging,
  Laari,
  Text,
  Timestamp
} from "../Http/Fields.js"
import * as Idempotent from "../Http/Idempotent.js"
import * as MandatesProblems from "./Problems.js"
import * as Declare from "../Http/Declare.js"
import * as Access from "../Http/Access.js"

/** The terms the customer approves, as every read of a mandate shows them (the approval page's too). */
export const TermsFields = {
  title: Fields.Title,
  description: Schema.NullOr(Fields.Description),
  currency: Money.CurrencyCode,
  perChargeCap: Money.Amount,
  periodCap: Schema.NullOr(Money.Chargeable),
  period: Schema.NullOr(Mandate.Period)
}

export const MandateRead = Schema.Struct({
  id: Ids.MandateId,
  reference: Fields.Reference,
  status: Mandate.Status,
  ...TermsFields,
  periodKey: Schema.NullOr(Text).annotations({
    description: "The payer's month of the current period, YYYY-MM"
  }),
  periodCharged: Laari("Laari charged in the current period; stays 0 on a mandate without a `period`"),
  setupExpiresAt: Timestamp.annotations({ description: "Until when the customer can approve it" }),
  expiresAt: Timestamp,
  approvedAt: Schema.NullOr(Timestamp),
  revokedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
}).annotations({
  identifier: "Mandate",
  description: "A standing authorization to charge a customer within caps"
})

export const MandateCreated = Schema.Struct({
  id: Ids.MandateId,
  reference: Fields.Reference,
  status: Mandate.Status,
  url: Text.annotations({ description: "The page where the customer approves the mandate" })
}).annotations({ identifier: "MandateCreated" })

export const ChargeRead = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The charge's id (a UUID)" }),
  mandateId: Ids.MandateId,
  amount: Money.Amount,
  currency: Money.CurrencyCode,
  status: Schema.Literal("SUCCEEDED").annotations({
    description: "Always `SUCCEEDED`: a refused charge is an error answer, never a charge"
  }),
  description: Text.annotations({ description: "What the charge is for, as sent" }),
  reference: Text.annotations({
    description: "The charge's reference: as sent, or else the mandate's reference"
  }),
  fee: Laari("The platform's fee, in laari"),
  netAmount: Laari("What the merchant receives, in laari: `amount - fee`"),
  amountRefunded: Laari("Laari given back by refunds so far (`POST /refunds`); at most `amount`"),
  periodKey: Text.annotations({
    description: "The period the charge counted in, YYYY-MM in the customer's calendar"
  }),
  periodCharged: Laari(
    "Laari charged in `periodKey` so far, this charge included: what is left of `periodCap` follows"
  ),
  createdAt: Timestamp
}).annotations({ identifier: "MandateCharge", description: "A charge taken under a mandate" })

/** Field rules are core's (`Fields`, `Money`, `Mandate`); cross-field ones are `Mandate.validateTerms`. */
export const CreateMandate = Body({
  reference: Fields.Reference,
  title: Fields.Title,
  per_charge_cap: Money.Amount,
  description: optionalNullable(Fields.Description),
  // At least `per_charge_cap`, which only `Mandate.validateTerms` can see.
  period_cap: optionalNullable(Money.Chargeable),
  period: optionalNullable(Mandate.Period).annotations({
    description: "`MONTH`: the period of `period_cap`, the payer's calendar month; required with `period_cap`"
  }),
  expires_at: optionalNullable(OffsetDateTime).annotations({
    description: "When the mandate ends, at most 365 days away (default 365 days); ISO 8601 with an offset"
  }),
  return_url: optionalNullable(Fields.ReturnUrl)
}).annotations({
  examples: [
    {
      reference: "gym-0042",
      title: "Monthly membership",
      description: "Gold membership, billed on the 1st",
      per_charge_cap: 50_000,
      period_cap: 100_000,
      period: "MONTH",
      return_url: "https://shop.example/mandates/done"
    }
  ]
})

export const CreateCharge = Body({
  amount: Mandate.ChargeAmount,
  description: optionalNullable(Fields.Description),
  reference: optionalNullable(Fields.Reference)
}).annotations({
  examples: [{ amount: 45_000, description: "November membership", reference: "gym-0042-2026-11" }]
})

export const Revoked = Schema.Struct({
  id: Ids.MandateId,
  status: Mandate.Status,
  message: Text.annotations({ description: "What happened, in words: `Mandate revoked`" })
}).annotations({
  identifier: "MandateRevoked"
})

const IdPath = IdOrReference("mandate")

/** The URL parameters of the list, which the GraphQL read API takes as its arguments too. */
export const ListParams = Schema.Struct({
  status: Schema.optional(Mandate.Status).annotations({
    description: "Only mandates in this status"
  }),
  reference: Schema.optional(Fields.Reference),
  ...Paging
})

export class MandatesApi extends HttpApiGroup.make("mandates")
  .add(
    Idempotent.post("create", "/mandates")
      .setPayload(CreateMandate)
      .addSuccess(MandateCreated, { status: 201 })
      .addError(MandatesProblems.MandatesNotEnabled)
      .addError(MandatesProblems.MandateReferenceTaken)
      .annotate(OpenApi.Summary, "Create a mandate")
      .annotate(
        OpenApi.Description,
        "Creates a mandate in `PENDING` and returns the `url` where the customer approves it with a one-time code. Caps are in laari."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/mandates/:id")
      .setPath(IdPath)
      .addSuccess(MandateRead)
      .addError(MandatesProblems.MandateNotFound)
      .annotate(OpenApi.Summary, "Fetch a mandate")
      .annotate(OpenApi.Description, "By id or by the merchant's reference.")
  )
  .add(
    HttpApiEndpoint.get("list", "/mandates")
      .setUrlParams(ListParams)
      .addSuccess(Schema.Array(MandateRead))
      .annotate(OpenApi.Summary, "List mandates")
      .annotate(OpenApi.Description, "Newest first, optionally by status or reference.")
  )
  .add(
    Idempotent.post("charge", "/mandates/:id/charges")
      .setPath(IdPath)
      .setPayload(CreateCharge)
      .addSuccess(ChargeRead, { status: 201 })
      .addError(MandatesProblems.ChargeRefused.NotFound)
      .addError(MandatesProblems.ChargeRefused.Conflict)
      .addError(MandatesProblems.ChargeRefused.Unprocessable)
      .addError(MandatesProblems.ChargeRefused.PaymentRequired)
      .addError(MandatesProblems.ChargeRefused.Unavailable)
      // Charging moves money: the scope of the merchant's money, not of its mandates.
      .annotate(Access.Access, Access.scoped("payments:write"))
      .annotate(OpenApi.Summary, "Charge a mandate")
      .annotate(
        OpenApi.Description,
        "Takes `amount` laari from the customer's wallet within the mandate's caps, server-side. A refusal moves no money and carries its `code` (each status's codes are listed below); a genuine new attempt uses a new `Idempotency-Key`."
      )
  )
  .add(
    Idempotent.post("revoke", "/mandates/:id/revoke")
      .setPath(IdPath)
      .addSuccess(Revoked)
      .addError(MandatesProblems.MandateNotFound)
      .addError(MandatesProblems.MandateNotRevocable)
      .annotate(OpenApi.Summary, "Revoke a mandate")
      .annotate(OpenApi.Description, "Ends the mandate; no charge is taken under it again.")
  )
  .pipe(
    Declare.merchant({
      access: Access.scoped("mandates:write"),
      title: "Mandates",
      description: "Standing authorizations, approved once by the customer, charged server-side within caps"
    })
  ) {}
