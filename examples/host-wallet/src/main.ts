/**
 * `pnpm --filter @laari/example-host-wallet start`: laari charging a mandate through the host's own ledger.
 */
import { Money } from "@laari/core"
import { Effect } from "effect"
import { run } from "./program.js"

const mvr = (laari: number) => `MVR ${Money.formatMvr(laari)}`.padStart(14)

const result = await Effect.runPromise(run)
console.log(`mandate created ${result.created}, approved ${result.approved}`)
console.log(
  `charged ${Money.formatMvr(result.charge.amount)} (fee ${Money.formatMvr(result.charge.fee)}, ` +
    `net ${Money.formatMvr(result.charge.netAmount)})`
)
console.log(`a charge over the per-charge cap was refused: ${result.overCap}`)
console.log(`a charge over the customer's balance was refused: ${result.overBalance}`)
console.log("\nhost ledger, live accounts:")
console.log(`  customer  ${mvr(result.balances.customer)}`)
console.log(`  merchant  ${mvr(result.balances.merchant)}`)
console.log(`  fees      ${mvr(result.balances.fees)}`)
console.log(`  treasury  ${mvr(result.balances.treasury)}`)
console.log(
  `\n${result.trial.postings} postings in the whole book (the test sandbox payer's opening too): debits ${Money.formatMvr(result.trial.debits)}, ` +
    `credits ${Money.formatMvr(result.trial.credits)}, sum ${result.trial.sum}`
)
console.log("sum of postings after each step:")
for (const s of result.steps) console.log(`  ${s.step.padEnd(28)} ${s.trial.sum}`)
