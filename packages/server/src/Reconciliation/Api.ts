/**
 * The operator's reconciliation of a Maldives day against the wallet provider's core: run it now, read a
 * day's run. Behind the operator token, in the operator API's document.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Reconciliation } from "@laari/core"
import { Either, Schema } from "effect"
import * as Declare from "../Http/Declare.js"
import * as ReconciliationProblems from "./Problems.js"
import { Body, Laari, Text, Timestamp, WholeNumber } from "../Http/Fields.js"
import * as Problems from "../Http/Problems.js"

/** A Maldives day; described at the property, so a refusal keeps the words of its rule. */
const Day = Text.pipe(
  Schema.filter((s) => Either.isRight(Reconciliation.day(s)), {
    message: () => "must be a calendar date YYYY-MM-DD",
    jsonSchema: { format: "date", maxLength: 10 }
  })
)

const dayField = (description: string) => Schema.propertySignature(Day).annotations({ description })

const MovementStatus = Schema.Literal("pending", "posted", "refused", "cancelled")

const laari = (what: string) =>
  Schema.NullOr(Laari(what)).annotations({ description: `${what}; \`null\` where that side has none` })

const status = (whose: string) =>
  Schema.NullOr(MovementStatus).annotations({
    description: `${whose} status of the transfer (the core's is always \`posted\`: its statement lists what moved); \`null\` where that side has none`
  })

export const BreakRead = Schema.Struct({
  transfer_id: Text.annotations({ description: "laari's transfer id (the movement's id, and the core's)" }),
  kind: Reconciliation.Kind.annotations({
    description:
      "`missing_in_core`: laari holds it posted on the day and the core's statement lacks it; `missing_in_laari`: the core lists it and laari has no movement of it; `amount_mismatch`: both posted it, with another amount or fee; `status_mismatch`: the core posted it and laari holds it pending, refused or cancelled"
  }),
  laari_amount: laari("laari's amount, in laari"),
  core_amount: laari("The core's amount, in laari"),
  laari_fee: laari("laari's fee, in laari"),
  core_fee: laari("The core's fee, in laari (0 for none)"),
  laari_status: status("laari's"),
  core_status: status("The core's")
}).annotations({ identifier: "OpsReconciliationBreak", description: "A transfer the two sides disagree on" })

const total = (description: string) =>
  Schema.NullOr(WholeNumber(description)).annotations({
    description: `${description}; \`null\` while the run is under way, and when it failed`
  })

export const RunRead = Schema.Struct({
  date: Text.annotations({ description: "The Maldives day reconciled, `YYYY-MM-DD`" }),
  status: Reconciliation.RunStatus.annotations({
    description:
      "`running`: under way; `clean`: the sides agree; `breaks`: they do not, `breaks` lists where; `failed`: the run could not compare the day, `error` says why (never `clean` on a failure)"
  }),
  started_at: Timestamp.annotations({ description: "When the run started: Maldives time (+05:00)" }),
  finished_at: Schema.NullOr(Timestamp).annotations({
    description: "When it finished, Maldives time (+05:00); `null` while it runs"
  }),
  laari_count: total("How many movements laari holds posted on the day"),
  laari_amount: total("Their amounts summed, in laari"),
  laari_fee: total("Their fees summed, in laari"),
  core_count: total("How many transfers the core's statement of the day lists"),
  core_amount: total("Their amounts summed, in laari"),
  core_fee: total("Their fees summed, in laari"),
  break_count: WholeNumber("How many breaks the run found"),
  error: Schema.NullOr(Text).annotations({ description: "Why the run failed; `null` unless it did" }),
  breaks: Schema.Array(BreakRead).annotations({
    description: "The breaks, by transfer id; none unless `breaks`"
  })
}).annotations({ identifier: "OpsReconciliationRun", description: "A day's reconciliation run" })

export class ReconciliationApi extends HttpApiGroup.make("opsReconciliation")
  .add(
    Problems.post("runReconciliation", "/ops/reconciliation/runs")
      .setPayload(Body({ date: dayField("The Maldives day to reconcile, `YYYY-MM-DD`: today or before") }))
      .addSuccess(RunRead)
      .addError(ReconciliationProblems.ReconciliationConnectorOff)
      .addError(ReconciliationProblems.ReconciliationRunInProgress)
      .annotate(OpenApi.Summary, "Reconcile a day")
      .annotate(
        OpenApi.Description,
        "Reads the core's whole statement of the day and laari's movements of it, compares them, and answers the stored run with its breaks; it replaces the day's run before. A core that does not answer makes a `failed` run with its `error`, never a clean one. `409` with the wallet connector off, or while another run of the day is under way."
      )
  )
  .add(
    HttpApiEndpoint.get("reconciliationRun", "/ops/reconciliation/runs/:date")
      .setPath(Schema.Struct({ date: dayField("The Maldives day, `YYYY-MM-DD`") }))
      .addSuccess(RunRead)
      .addError(Problems.NotFoundProblem)
      .annotate(OpenApi.Summary, "A day's reconciliation run")
      .annotate(
        OpenApi.Description,
        "The day's latest run with its breaks; `404` when the day was never run."
      )
  )
  .pipe(Declare.operator({ title: "Operations: reconciliation" })) {}
