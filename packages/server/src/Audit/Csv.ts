/**
 * The audit log as CSV (RFC 4180), what the dashboard's export downloads: one line per row, newest first,
 * every id in full, times in Maldives time, the summary as its JSON. Unlike the settlement report, rows
 * hold text a merchant or a client wrote (a reference, a URL, a `User-Agent`), so a cell a spreadsheet
 * would read as a formula is quoted and prefixed with `'`.
 */
import { type AuditEvent, Calendar } from "@laari/core"

export const Header = [
  "id",
  "created_at",
  "actor_kind",
  "actor_id",
  "action",
  "resource_type",
  "resource_id",
  "environment",
  "summary",
  "address",
  "user_agent",
  "request_id",
  "chain",
  "seq",
  "hash"
] as const

/** A cell: text that starts like a formula is defused; quoted when it holds a separator, quote or break. */
export const cell = (value: string | number | null): string => {
  if (value === null) return ""
  const raw = String(value)
  const text = typeof value === "string" && /^[=+\-@\t\r]/.test(raw) ? `'${raw}` : raw
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One row's cells, in `Header`'s order. */
export const line = (e: AuditEvent.Event): string =>
  [
    e.id,
    Calendar.formatMaldives(e.at),
    e.actor.kind,
    e.actor.id,
    e.action,
    e.resourceType,
    e.resourceId,
    e.environment,
    JSON.stringify(e.summary),
    e.address,
    e.userAgent,
    e.requestId,
    e.chain,
    e.seq,
    e.hash
  ]
    .map(cell)
    .join(",")

/** The header, then one line per row as given, each ending in CRLF. */
export const csv = (rows: ReadonlyArray<AuditEvent.Event>): string =>
  `${[Header.join(","), ...rows.map(line)].join("\r\n")}\r\n`
