/**
 * The daily reconciliation: once a Maldives day is over (from 01:00 the next day, `Reconciliation.dueDate`),
 * it is reconciled against the wallet provider's core, once. Every process looks each minute; the day's
 * row is the claim (`Sql/Reconciliation.claim`), so one process runs it and the others find it taken. A
 * failed run is tried again an hour later while its day is the one due; an operator runs any day with
 * `POST /ops/reconciliation/runs`. Off without a connector, and on a manual clock, which runs no poller.
 */
import { Effect } from "effect"
import { Reconciler } from "../WalletConnector/Reconcile.js"
import * as Reconcile from "../WalletConnector/Reconcile.js"

/** Looks every `DailyEvery` for the day due; never fails, a failed look is logged and the next one comes. */
export const daily = Effect.gen(function* () {
  const reconciler = yield* Reconciler
  if (!reconciler.enabled) return
  yield* reconciler.daily.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("daily reconciliation failed; retrying", cause)),
    Effect.zipRight(Effect.sleep(Reconcile.DailyEvery)),
    Effect.forever
  )
}).pipe(Effect.provide(Reconcile.serverLayer))
