/**
 * The merchant's balance, its movements and the daily settlement report. Scope
 * `payments:write`: the scope that governs the merchant's money.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Balance, Ids, Money } from "@laari/core"
import { Schema } from "effect"
import { Paging, Text, TextUpTo, Timestamp } from "../Http/Fields.js"
import * as BalanceProblems from "./Problems.js"
import * as Declare from "../Http/Declare.js"
import * as Access from "../Http/Access.js"

const Laari = Schema.Int.annotations({ description: "Laari (100 laari = 1 MVR)" })

export const BalanceRead = Schema.Struct({
  available: Laari.annotations({ description: "What the merchant holds now in this environment, in laari" }),
  currency: Money.CurrencyCode,
  environment: Ids.Environment,
  asOf: Timestamp
}).annotations({ identifier: "Balance", description: "The merchant's available balance" })

export const BalanceTransactionRead = Schema.Struct({
  id: Text.annotations({ description: "The ledger transfer's id; the cursor of the list" }),
  type: Balance.Type.annotations({
    description:
      "`charge` (a mandate charge), `qr_payment`, `checkout_payment` (a checkout session's payment, the first cycle of a subscription included), `invoice` (a renewal), `refund`, or `adjustment`"
  }),
  gross: Laari.annotations({ description: "What the payer paid (negative: what went back), in laari" }),
  fee: Laari.annotations({ description: "The service's fee on it, in laari (a refund returns none)" }),
  net: Laari.annotations({ description: "What the merchant's balance moved by: `gross - fee`" }),
  currency: Money.CurrencyCode,
  sourceId: Text.annotations({
    description: "The id of the charge, QR payment, checkout session, invoice or refund"
  }),
  createdAt: Timestamp
}).annotations({
  identifier: "BalanceTransaction",
  description: "One movement of the merchant's balance: one ledger transfer"
})

export const BalanceTransactionList = Schema.Struct({
  data: Schema.Array(BalanceTransactionRead).annotations({ description: "The movements, newest first" }),
  hasMore: Schema.Boolean.annotations({ description: "Whether older movements follow the last one" })
}).annotations({ identifier: "BalanceTransactionList" })

export const ListParams = Schema.Struct({
  starting_after: Schema.optional(
    TextUpTo(255).annotations({
      description: "A balance transaction's `id`: list the ones after it (older)"
    })
  ),
  limit: Paging.limit
})

export const ReportParams = Schema.Struct({
  date: TextUpTo(64).annotations({
    description: "The Maldives calendar day, `YYYY-MM-DD` (00:00 to 24:00 at +05:00)",
    examples: ["2026-03-31"]
  })
})

export const SettlementCsv = HttpApiSchema.withEncoding(
  Schema.String.annotations({
    description:
      "A header line (`id,type,source_id,created_at,gross,fee,net`), one line per movement oldest first, and a `total` line whose gross, fee and net are the sums of the lines above"
  }),
  { kind: "Text", contentType: "text/csv" }
)

export class BalanceApi extends HttpApiGroup.make("balance")
  .add(
    HttpApiEndpoint.get("get", "/balance")
      .addSuccess(BalanceRead)
      .annotate(OpenApi.Summary, "Fetch the balance")
      .annotate(
        OpenApi.Description,
        "The merchant's available balance in the key's environment now: payments received net of fees, less refunds."
      )
  )
  .add(
    HttpApiEndpoint.get("transactions", "/balance-transactions")
      .setUrlParams(ListParams)
      .addSuccess(BalanceTransactionList)
      .addError(BalanceProblems.BalanceTransactionNotFound)
      .annotate(OpenApi.Summary, "List balance transactions")
      .annotate(
        OpenApi.Description,
        "Every movement of the merchant's balance, newest first: one per payment or refund, its fee shown on it. Page with `starting_after` (the last `id` seen) while `hasMore`."
      )
  )
  .add(
    HttpApiEndpoint.get("settlement", "/reports/settlement")
      .setUrlParams(ReportParams)
      .addSuccess(SettlementCsv)
      .addError(BalanceProblems.InvalidReportDate)
      .annotate(OpenApi.Summary, "Download a settlement report")
      .annotate(
        OpenApi.Description,
        "One Maldives day's movements as CSV (an attachment), with a totals line equal to the ledger's sums for the day."
      )
  )
  .pipe(
    Declare.merchant({
      access: Access.scoped("payments:write"),
      title: "Balance",
      description: "The merchant's balance, its movements and daily settlement reports"
    })
  ) {}
