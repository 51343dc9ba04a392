/**
 * `pnpm --filter @laari/example-embed start`: create, approve and charge a mandate through the library.
 */
import { Money } from "@laari/core"
import { Effect } from "effect"
import { runInMemory } from "./program.js"

const result = await Effect.runPromise(runInMemory)
console.log(`mandate created ${result.created}, approved ${result.approved}`)
console.log(
  `charged MVR ${Money.formatMvr(result.charge.amount)} (fee MVR ${Money.formatMvr(result.charge.fee)}, ` +
    `net MVR ${Money.formatMvr(result.charge.netAmount)}) in period ${result.charge.periodKey}, ` +
    `period total MVR ${Money.formatMvr(result.charge.periodCharged)}`
)
console.log(`a charge above the per-charge cap was refused: ${result.refused}`)
