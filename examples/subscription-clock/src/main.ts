/**
 * `pnpm --filter @laari/example-subscription-clock start`: a monthly subscription renewed, retried and
 * ended on a clock that moves only when told to.
 */
import { Money } from "@laari/core"
import { Effect } from "effect"
import { run } from "./program.js"

const result = await Effect.runPromise(run)
console.log(`subscribed at ${result.anchor} (Maldives time), MVR 150.00 a month\n`)
console.log("month by month:")
for (const m of result.months)
  console.log(
    `  ${m.at}  ${m.subscription.padEnd(9)}  customer MVR ${Money.formatMvr(m.customerBalance).padStart(7)}` +
      `  merchant MVR ${Money.formatMvr(m.merchantBalance).padStart(7)}  ${m.invoices.at(-1)}`
  )
console.log("\nevents:")
for (const e of result.timeline) {
  const invoice =
    e.period === undefined
      ? ""
      : `  cycle ${e.period}, MVR ${Money.formatMvr(e.amount ?? 0)}, attempt ${e.attempts}` +
        (e.failure ? ` (${e.failure})` : "") +
        (e.nextRetry ? `, next retry ${e.nextRetry}` : "")
  console.log(`  ${e.at}  ${e.type.padEnd(27)} ${e.status.padEnd(9)}${invoice}`.trimEnd())
}
console.log(`\nended: ${result.ended.status} by ${result.ended.by}`)
