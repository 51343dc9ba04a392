/**
 * `laari reconcile --date YYYY-MM-DD`: reconciles a Maldives day against the wallet provider's core now,
 * through the running service's operator API (`POST /ops/reconciliation/runs`). A clean day is one line;
 * otherwise one line a break with both sides' figures. Exit status 1 when the day has breaks or the run
 * failed, so a script can tell.
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import * as Remote from "./Remote.js"

interface Side {
  readonly amount: number | null
  readonly fee: number | null
  readonly status: string | null
}

const side = (s: Side) => (s.status === null ? "none" : `${s.amount} (fee ${s.fee}, ${s.status})`)

const totals = (count: number | null, amount: number | null, fee: number | null) =>
  `${count} transfer${count === 1 ? "" : "s"}, ${amount} laari, fees ${fee}`

const failedExit = Effect.sync(() => {
  process.exitCode = 1
})

export const reconcile = Command.make(
  "reconcile",
  {
    ...Remote.operator,
    date: Options.text("date").pipe(
      Options.withDescription("The Maldives day to reconcile, YYYY-MM-DD (today or before)")
    )
  },
  (o) =>
    Effect.gen(function* () {
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      const run = yield* client.opsReconciliation.runReconciliation({ payload: { date: o.date } })
      const breaks = run.breaks.map((b) => ({
        kind: b.kind,
        id: b.transfer_id,
        laari: side({ amount: b.laari_amount, fee: b.laari_fee, status: b.laari_status }),
        core: side({ amount: b.core_amount, fee: b.core_fee, status: b.core_status })
      }))
      const width = Math.max(0, ...breaks.map((b) => b.kind.length))
      yield* Remote.print(o.json, run, () =>
        run.status === "clean"
          ? [
              `${run.date}: clean: laari and the core agree on ${totals(run.core_count, run.core_amount, run.core_fee)}.`
            ]
          : run.status === "failed"
            ? [`${run.date}: the reconciliation failed, nothing was compared: ${run.error}`]
            : [
                `${run.date}: ${run.break_count} break${run.break_count === 1 ? "" : "s"} (laari: ${totals(run.laari_count, run.laari_amount, run.laari_fee)}; core: ${totals(run.core_count, run.core_amount, run.core_fee)})`,
                ...breaks.map((b) => `  ${b.kind.padEnd(width)}  ${b.id}  laari ${b.laari}  core ${b.core}`)
              ]
      )
      if (run.status !== "clean") yield* failedExit
    }).pipe(Remote.report(o.url))
).pipe(
  Command.withDescription(
    "Reconcile a Maldives day against the wallet provider's core now: clean, or each break (exit 1 on breaks or a failure)"
  )
)
