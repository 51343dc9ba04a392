/**
 * What the memory adapters share: how a table row is inserted, found (by id in any letter case, by the
 * tenant's reference) and ordered, the way the SQL stores' queries do it.
 */
import { Ids } from "@laari/core"
import { DateTime, HashMap, Option } from "effect"
import type { Row, Tables } from "./MemoryDb.js"

/** Newest first: by creation time, then by insertion order. */
export const newestFirst = <A extends { readonly createdAt: DateTime.Utc }>(
  rows: Iterable<Row<A>>
): Array<A> =>
  Array.from(rows)
    .sort(
      (a, b) =>
        DateTime.toEpochMillis(b.value.createdAt) - DateTime.toEpochMillis(a.value.createdAt) || b.seq - a.seq
    )
    .map((row) => row.value)

export const belongsTo = (
  m: { readonly merchantId: string; readonly environment: string },
  tenant: { readonly merchantId: string; readonly environment: string }
) => m.merchantId === tenant.merchantId && m.environment === tenant.environment

type RowOf<T> = T extends HashMap.HashMap<string, infer R> ? R : never

/** The tables of plain rows (a record and its insertion `seq`, nothing more), by name. */
type RowTable = {
  [K in keyof Tables]: RowOf<Tables[K]> extends Row<infer A>
    ? Row<A> extends RowOf<Tables[K]>
      ? K
      : never
    : never
}[keyof Tables]
type RowValue<K extends RowTable> = RowOf<Tables[K]> extends Row<infer A> ? A : never

/** `t` with `value` added to table `key` as row `id`, numbered by the next `seq`. */
export const insertRow = <K extends RowTable>(t: Tables, key: K, id: string, value: RowValue<K>): Tables => {
  const table = t[key] as HashMap.HashMap<string, Row<RowValue<K>>>
  return { ...t, [key]: HashMap.set(table, id, { seq: t.seq, value }), seq: t.seq + 1 }
}

/** The row `id` names (in any case), when it is the tenant's. */
export const ownRow = <A extends { readonly merchantId: string; readonly environment: string }>(
  table: HashMap.HashMap<string, Row<A>>,
  tenant: Ids.Tenant,
  id: string
): A | undefined => {
  const found = Option.getOrUndefined(HashMap.get(table, id.toLowerCase()))?.value
  return found !== undefined &&
    found.merchantId === tenant.merchantId &&
    found.environment === tenant.environment
    ? found
    : undefined
}

/** Earliest first by `at`, then by insertion order; rows without a moment are left out. */
export const earliestFirst = <R extends { readonly seq: number }>(
  rows: Iterable<R>,
  at: (row: R) => DateTime.Utc | null | undefined
): Array<R> =>
  Array.from(rows)
    .filter((row) => at(row) != null)
    .sort((a, b) => DateTime.toEpochMillis(at(a)!) - DateTime.toEpochMillis(at(b)!) || a.seq - b.seq)

/** The earliest of `moments`, if any. */
export const earliest = (moments: Iterable<DateTime.Utc | null | undefined>): DateTime.Utc | undefined => {
  let first: DateTime.Utc | undefined
  for (const at of moments)
    if (at != null && (first === undefined || DateTime.lessThan(at, first))) first = at
  return first
}

/** A row by a uuid key, as a `uuid` column finds it: in any letter case, and never by a malformed one. */
export const byUuid = <A>(table: HashMap.HashMap<string, A>, id: string): A | undefined =>
  Ids.isUuid(id) ? Option.getOrUndefined(HashMap.get(table, id.toLowerCase())) : undefined

/** One of the tenant's records by id or by reference, like the SQL stores' `lookupKey`. */
export const byLookup = <
  A extends { readonly merchantId: string; readonly environment: string; readonly reference: string | null }
>(
  table: HashMap.HashMap<string, { readonly value: A }>,
  tenant: Ids.Tenant,
  lookup: Ids.Lookup
): A | undefined => {
  if (lookup._tag === "ById") {
    const found = byUuid(table, lookup.id)?.value
    return found !== undefined && belongsTo(found, tenant) ? found : undefined
  }
  for (const row of HashMap.values(table))
    if (belongsTo(row.value, tenant) && row.value.reference === lookup.reference) return row.value
  return undefined
}

/** Whether another of the tenant's rows of `table` has `record`'s reference: what the unique index refuses. */
export const referenceTaken = (
  table: HashMap.HashMap<string, { readonly value: Referenced }>,
  record: Referenced
): boolean =>
  record.reference !== null &&
  Array.from(HashMap.values(table)).some(
    (row) => belongsTo(row.value, record) && row.value.reference === record.reference
  )

interface Referenced {
  readonly merchantId: string
  readonly environment: string
  readonly reference: string | null
}

/**
 * A page of the tenant's rows of `table` that `keep` accepts, newest first: a `list` of the SQL stores,
 * whose filters `matching` and the like express.
 */
export const tenantPage = <
  A extends { readonly merchantId: string; readonly environment: string; readonly createdAt: DateTime.Utc }
>(
  table: HashMap.HashMap<string, Row<A>>,
  tenant: Ids.Tenant,
  page: { readonly limit: number; readonly offset: number },
  keep: (value: A) => boolean = () => true
): Array<A> =>
  newestFirst(
    Array.from(HashMap.values(table)).filter(({ value }) => belongsTo(value, tenant) && keep(value))
  ).slice(page.offset, page.offset + page.limit)

/** Whether `value` has each of `fields` that `filter` sets: a listing's optional equality filters. */
export const matching =
  <F extends object, K extends keyof F>(filter: F, fields: ReadonlyArray<K>) =>
  (value: { readonly [P in K]: unknown }): boolean =>
    fields.every((field) => filter[field] === undefined || value[field] === filter[field])
