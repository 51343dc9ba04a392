/**
 * The HTTP answers of the reconciliation's errors (operator API), against the wallet provider's core. An
 * endpoint lists the ones it can fail with (`addError`); an error is answered by the schemas its endpoint
 * lists.
 */
import { Reconciliation } from "@laari/core"
import * as Problem from "../Http/Problem.js"

export const ReconciliationConnectorOff = Problem.plain(
  Reconciliation.ConnectorOff,
  "WalletConnectorOff",
  409,
  "No wallet provider's core is configured (`LAARI_WALLET_URL` is unset): there is nothing to reconcile against",
  "WALLET_CONNECTOR_OFF"
)

export const ReconciliationRunInProgress = Problem.plain(
  Reconciliation.RunInProgress,
  "ReconciliationRunInProgress",
  409,
  "A run of this day is under way (in this process or another); read it once it is done",
  "RECONCILIATION_RUNNING"
)
