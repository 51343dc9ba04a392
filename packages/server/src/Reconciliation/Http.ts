/**
 * Handlers of the operator's reconciliation endpoints: the service runs and reads; these answer.
 */
import { Effect } from "effect"
import * as Operation from "../Http/Operation.js"
import * as Problems from "../Http/Problems.js"
import { Reconciler } from "../WalletConnector/Reconcile.js"
import { ReconciliationApi } from "./Api.js"
import * as Json from "./Json.js"

export const ReconciliationLive = Operation.handlers(ReconciliationApi, (handlers) =>
  Effect.gen(function* () {
    const reconciler = yield* Reconciler
    return handlers
      .handle("runReconciliation", ({ payload }) => Effect.map(reconciler.run(payload.date), Json.run))
      .handle("reconciliationRun", ({ path }) =>
        Effect.flatMap(reconciler.get(path.date), (found) =>
          found === undefined
            ? Effect.fail(
                new Problems.NotFound({
                  message: `No reconciliation run of ${path.date}: run one with POST /ops/reconciliation/runs`
                })
              )
            : Effect.succeed(Json.run(found))
        )
      )
  })
)
