/**
 * The audit log's rows and the chain that makes an edit detectable. Every change is one append-only row;
 * the rows of one chain (a merchant's, or the operator's for changes that name no merchant) are numbered
 * 1, 2, 3... and each holds the hash of the row before it, so changing a row's content breaks its own
 * hash, and deleting or inserting one breaks the link of the row after it.
 *
 * Pure: the hash function is the caller's (`Crypto.sha256`), so the writer and `laari audit verify`
 * decide with the same rules, and a chain of any length is checked one row at a time (`check`).
 */
import { DateTime, Schema } from "effect"
import { Environment } from "../kernel/Ids.js"

/** Who made the change: a person signed in, or a credential of a machine. */
export const ActorKind = Schema.Literal("user", "api_key", "oauth_client", "ops_token", "cli").annotations({
  description:
    "`user`: a person signed in to the dashboard or the operator console; `api_key` and `oauth_client`: a merchant's credential; `ops_token`: the operator's automation token; `cli`: the operator's command line on the server"
})
export type ActorKind = typeof ActorKind.Type

export const Actor = Schema.Struct({
  kind: ActorKind,
  /** The user's, key's or client's id; for the ops token and the CLI, a label naming which. */
  id: Schema.String
})
export type Actor = typeof Actor.Type

/** A summary's value: text or a whole number, never an object (a summary is flat). */
export const SummaryValue = Schema.Union(Schema.String, Schema.Int, Schema.Boolean, Schema.Null)
export type SummaryValue = typeof SummaryValue.Type

export const Summary = Schema.Record({ key: Schema.String, value: SummaryValue })
export type Summary = typeof Summary.Type

/** What a change records, before it has its place in the chain. */
export interface Entry {
  readonly merchantId: string | null
  readonly environment: Environment | null
  readonly actor: Actor
  /** What was done, `<resource>.<verb>`: `refund.create`, `mandate.revoke`, `key.create`. */
  readonly action: string
  readonly resourceType: string
  readonly resourceId: string | null
  /** What changed, made safe by `summarize`. */
  readonly summary: Summary
  readonly address: string | null
  readonly userAgent: string | null
  readonly requestId: string | null
  readonly at: DateTime.Utc
}

/** A row as stored: the entry in its chain. */
export interface Event extends Entry {
  readonly id: string
  readonly chain: string
  readonly seq: number
  readonly prevHash: string
  readonly hash: string
}

/** The chain of changes that name no merchant (a merchant created, the ops token rotated). */
export const OperatorChain = "operator"

export const chainOf = (merchantId: string | null): string =>
  merchantId === null ? OperatorChain : `merchant:${merchantId}`

/** The `prevHash` of a chain's first row. */
export const Genesis = "0".repeat(64)

/** A chain's last row, as the next one needs it. */
export interface Head {
  readonly seq: number
  readonly hash: string
}

/** Where the next row of a chain goes: after `head`, or first. */
export const next = (head: Head | undefined): { readonly seq: number; readonly prevHash: string } =>
  head === undefined ? { seq: 1, prevHash: Genesis } : { seq: head.seq + 1, prevHash: head.hash }

/** JSON with every object's keys in code-point order, so the same row always gives the same text. */
const canonical = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  const record = value as Record<string, unknown>
  return `{${Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`)
    .join(",")}}`
}

/**
 * The text a row's hash is taken of: every field but the hash itself, the instant to the millisecond
 * (what every store keeps). A field added to rows later must be added here, or it goes unprotected.
 */
export const hashInput = (row: Omit<Event, "hash">): string =>
  canonical({
    id: row.id,
    chain: row.chain,
    seq: row.seq,
    prevHash: row.prevHash,
    merchantId: row.merchantId,
    environment: row.environment,
    actor: { kind: row.actor.kind, id: row.actor.id },
    action: row.action,
    resourceType: row.resourceType,
    resourceId: row.resourceId,
    summary: row.summary,
    address: row.address,
    userAgent: row.userAgent,
    requestId: row.requestId,
    at: DateTime.formatIso(row.at)
  })

/** Why a chain is broken at a row. */
export type Break =
  /** The row's content is not what its hash was taken of: it was edited. */
  | { readonly _tag: "edited"; readonly seq: number; readonly id: string }
  /** The row does not follow the one before: a row between was deleted, or this one inserted. */
  | { readonly _tag: "unlinked"; readonly seq: number; readonly id: string; readonly expectedSeq: number }
  /** The chain ends before the head the store keeps: its last rows were deleted. */
  | { readonly _tag: "truncated"; readonly seq: number; readonly headSeq: number }

/**
 * Whether `row` (whose hash input hashes to `computed`) rightly follows `before` (`undefined` for the
 * chain's first row). Rows are read in `seq` order, so a deleted row shows as a gap and an edited
 * `seq` as a row out of place.
 */
export const check = (before: Head | undefined, row: Event, computed: string): Break | undefined => {
  const expected = next(before)
  if (row.seq !== expected.seq || row.prevHash !== expected.prevHash)
    return { _tag: "unlinked", seq: row.seq, id: row.id, expectedSeq: expected.seq }
  if (row.hash !== computed) return { _tag: "edited", seq: row.seq, id: row.id }
  return undefined
}

/**
 * Whether the chain's last row (`undefined`: no rows) is the head the store keeps beside the chain,
 * written in the same transaction as every row: deleting the last rows breaks no link, only this.
 */
export const checkEnd = (last: Head | undefined, head: Head | undefined): Break | undefined =>
  (last?.seq ?? 0) === (head?.seq ?? 0) && (last?.hash ?? Genesis) === (head?.hash ?? Genesis)
    ? undefined
    : { _tag: "truncated", seq: last?.seq ?? 0, headSeq: head?.seq ?? 0 }

/** One line for a break, naming the row. */
export const describe = (chain: string, broken: Break): string => {
  switch (broken._tag) {
    case "edited":
      return `${chain}: row ${broken.seq} (${broken.id}) was changed after it was written`
    case "unlinked":
      return broken.seq === broken.expectedSeq
        ? `${chain}: row ${broken.seq} (${broken.id}) does not follow the row before it: a row was replaced`
        : `${chain}: row ${broken.seq} (${broken.id}) comes where row ${broken.expectedSeq} should: a row was deleted or inserted`
    case "truncated":
      return `${chain}: the chain ends at row ${broken.seq}, but its head is row ${broken.headSeq}: rows were deleted or the head changed`
  }
}

/** Where a summary names the fields it left out; parenthesised, so no field of a request has its name. */
export const OmittedKey = "(omitted)"

/** The longest text a summary keeps of one value. */
export const MaxSummaryText = 200

/*
 * The two name rules below keep their patterns inside the functions rather than in module constants: a
 * constant is built once, when the module is imported, and mutation testing leaves such code untested.
 */

/** Field names whose values are never written: secrets, passwords, one-time codes and tokens. */
const isSecretName = (key: string): boolean =>
  /secret|password|passcode|token|otp|pin$|^code$|_code$|recovery|signature|authorization/i.test(key)

/** Field names whose values are account numbers: shown by their last four characters only. */
const isAccountName = (key: string): boolean => /phone|wallet|account|msisdn|iban/i.test(key)

/** An account number as the log shows it: its last four characters, the rest masked. */
export const maskAccount = (value: string): string =>
  value.length <= 4
    ? "•".repeat(value.length)
    : `${"•".repeat(Math.min(value.length - 4, 8))}${value.slice(-4)}`

const flatValue = (value: unknown): SummaryValue | undefined => {
  if (value === null || typeof value === "boolean") return value
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : String(value)
  if (typeof value === "string")
    return value.length > MaxSummaryText ? `${value.slice(0, MaxSummaryText)}…` : value
  if (Array.isArray(value)) return `${value.length} item${value.length === 1 ? "" : "s"}`
  return undefined
}

/**
 * What a change's summary keeps of the fields it was given (a request's body, a resource's changed
 * fields): flat values under dotted names (`metadata.order`), secret-named fields left out altogether
 * (named in `omitted`, so the log says something was set), account numbers masked, long texts cut.
 */
export const summarize = (fields: Readonly<Record<string, unknown>>): Summary => {
  const out: Record<string, SummaryValue> = {}
  const omitted: Array<string> = []
  const visit = (prefix: string, record: Readonly<Record<string, unknown>>, depth: number) => {
    for (const key of Object.keys(record).sort()) {
      const name = prefix === "" ? key : `${prefix}.${key}`
      const value = record[key]
      if (value === undefined) continue
      if (isSecretName(key)) {
        omitted.push(name)
        continue
      }
      if (value !== null && typeof value === "object" && !Array.isArray(value)) {
        if (depth < 2) visit(name, value as Record<string, unknown>, depth + 1)
        else out[name] = "{…}"
        continue
      }
      const flat = flatValue(value)
      if (flat === undefined) continue
      out[name] = typeof flat === "string" && isAccountName(key) ? maskAccount(flat) : flat
    }
  }
  visit("", fields, 0)
  if (omitted.length > 0) out[OmittedKey] = omitted.join(", ")
  return out
}
