/**
 * A run as the operator API answers it: snake_case, one line per break with both sides' figures.
 */
import { Calendar, type Reconciliation } from "@laari/core"
import type { BreakRead, RunRead } from "./Api.js"

export const breakRead = (b: Reconciliation.Break): typeof BreakRead.Type => ({
  transfer_id: b.transferId,
  kind: b.kind,
  laari_amount: b.laari?.amount ?? null,
  core_amount: b.core?.amount ?? null,
  laari_fee: b.laari?.fee ?? null,
  core_fee: b.core?.fee ?? null,
  laari_status: b.laari?.status ?? null,
  core_status: b.core?.status ?? null
})

export const run = ({ run: r, breaks }: Reconciliation.RunWithBreaks): typeof RunRead.Type => ({
  date: r.date,
  status: r.status,
  started_at: Calendar.formatMaldives(r.startedAt),
  finished_at: r.finishedAt === null ? null : Calendar.formatMaldives(r.finishedAt),
  laari_count: r.laari?.count ?? null,
  laari_amount: r.laari?.amount ?? null,
  laari_fee: r.laari?.fee ?? null,
  core_count: r.core?.count ?? null,
  core_amount: r.core?.amount ?? null,
  core_fee: r.core?.fee ?? null,
  break_count: r.breakCount,
  error: r.error,
  breaks: breaks.map(breakRead)
})
