/**
 * The suite's summary rows of the refunds and failover parts, from their results (`suite.ts` prints the
 * table).
 */
import type * as Load from "./Load.js"

type Row = (what: string, figure: string, against: string, goal: string) => void

/** Refunds beside charges. */
export const refunds = (refundRuns: any, row: Row) => {
  if (refundRuns !== undefined) {
    const fig = (x: Load.Run) => `${x.perSecond}/s, p50 ${x.latencyMs.p50} ms, p99 ${x.latencyMs.p99} ms`
    const over = (x: { perSecond: number; p50: number; p99: number }) =>
      `refund/charge: ${x.perSecond}x rate, ${x.p50}x p50, ${x.p99}x p99`
    for (const name of ["postgresql", "pglite"]) {
      const x = refundRuns[name]
      if (x === undefined) continue
      row(
        `charges vs partial refunds of distinct charges on ${name} (${x.processes} processes, ${x.concurrency} in flight)`,
        `${fig(x.spread.charges)} vs ${fig(x.spread.refunds)}`,
        over(x.spread.refundOverCharge),
        ""
      )
      row(
        `charges on one mandate vs refunds of one charge on ${name}, one at a time`,
        `${fig(x.sequence.charges)} vs ${fig(x.sequence.refunds)}`,
        over(x.sequence.refundOverCharge),
        ""
      )
    }
    const l = refundRuns.library
    if (l !== undefined)
      row(
        "library (memory adapters): charges vs refunds of distinct charges vs refunds of one charge",
        `${l.chargesPerSecond}/s vs ${l.refundsDistinctPerSecond}/s vs ${l.refundsOneChargePerSecond}/s`,
        `refund/charge: ${l.refundOverCharge.distinct}x distinct, ${l.refundOverCharge.oneCharge}x one charge`,
        ""
      )
  }
}

/** Losing the database primary. */
export const failover = (f: any, row: Row) => {
  if (f !== undefined) {
    const fault = (x: any) =>
      `${x.toNewPrimarySeconds} s; ${x.toFirst201Seconds} s (longest without a 201: ${x.longestGapWithout201Seconds} s); ${x.status503} x 503, ${x.status500} x 500; ${x.found} of ${x.acknowledged} acknowledged charges found`
    row(
      `failover: kill -9 of the primary's postmaster, median of ${f.kills.length} (${f.dataNodes} data nodes, 2 hosts, ${f.processesPerHost} processes each): to the new primary; to the first 201; 503s`,
      `${f.killMedian.toNewPrimarySeconds} s; ${f.killMedian.toFirst201Seconds} s; ${f.killMedian.status503} x 503 (each: ${f.kills.map((k: any) => `${k.toFirst201Seconds} s`).join(", ")})`,
      "",
      "first 201 <= 30 s; 0 x 500; none lost"
    )
    for (const k of f.kills) row(`failover: ${k.fault}`, fault(k), "", "")
    for (const s of f.switchovers)
      row(`failover: ${s.fault}`, fault(s), "", "first 201 <= 30 s; 0 x 500; none lost")
    const t = f.throughput
    const fig = (x: any) => `${x.perSecond}/s, p50 ${x.p50Ms} ms, p99 ${x.p99Ms} ms`
    row(
      "charges through the formation (synchronous replication) vs a single PostgreSQL, same hosts and load",
      `${fig(t.formation)} vs ${fig(t.single)}`,
      `${t.synchronousOverSingle}x`,
      ""
    )
  }
}
