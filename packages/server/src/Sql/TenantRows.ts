/**
 * The statements every tenant-scoped table shares (mandates, QR codes, payments, checkout sessions,
 * subscriptions, invoices, refunds): a row by the path's `{id}` or by id within a tenant, a row locked by id
 * for background work, and an insert that answers `DuplicateReference` instead of failing. One place, so a
 * tenant condition cannot be forgotten in one table's copy.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Ids, Store } from "@laari/core"
import { Effect } from "effect"
import { lockClause, lookupKey, one } from "./Repository.js"

export interface TenantRows<A> {
  /** The tenant's row at a path `{id}` (its id or its reference), locked when asked; `undefined` if none. */
  readonly find: (
    tenant: Ids.Tenant,
    lookup: Ids.Lookup,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<A | undefined, SqlError>
  /** The tenant's row with this id. */
  readonly findById: (tenant: Ids.Tenant, id: string) => Effect.Effect<A | undefined, SqlError>
  /** Any tenant's row with this id, locked: for work that already holds the id (webhooks, renewals, sweeps). */
  readonly lockById: (id: string) => Effect.Effect<A | undefined, SqlError>
  /**
   * INSERT the row unless the tenant already has its reference (`<table>_reference`). ON CONFLICT rather
   * than catching 23505: a failed statement would abort the caller's transaction on PostgreSQL, and the
   * caller may want to carry on.
   */
  readonly insertUnlessTaken: (
    row: Record<string, unknown>,
    reference: string
  ) => Effect.Effect<void, SqlError | Store.DuplicateReference>
}

export const make = <Row extends object, A>(
  sql: SqlClient.SqlClient,
  table: string,
  fromRow: (row: Row) => A
): TenantRows<A> => {
  const name = sql(table)
  const tenantIs = (tenant: Ids.Tenant) =>
    sql`merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment}`
  const none = Effect.succeed(undefined)
  return {
    find: (tenant, lookup, options) => {
      const key = lookupKey(sql, lookup)
      if (key === undefined || !Ids.isUuid(tenant.merchantId)) return none
      return sql<Row>`SELECT * FROM ${name} WHERE ${tenantIs(tenant)} AND ${key}
        ${sql.literal(lockClause(options))}`.pipe(Effect.map(one(fromRow)))
    },
    findById: (tenant, id) =>
      Ids.isUuid(id) && Ids.isUuid(tenant.merchantId)
        ? sql<Row>`SELECT * FROM ${name} WHERE id = ${id.toLowerCase()} AND ${tenantIs(tenant)}`.pipe(
            Effect.map(one(fromRow))
          )
        : none,
    lockById: (id) =>
      Ids.isUuid(id)
        ? sql<Row>`SELECT * FROM ${name} WHERE id = ${id.toLowerCase()} FOR UPDATE`.pipe(
            Effect.map(one(fromRow))
          )
        : none,
    insertUnlessTaken: (row, reference) =>
      sql`INSERT INTO ${name} ${sql.insert(row)}
          ON CONFLICT ON CONSTRAINT ${sql(`${table}_reference`)} DO NOTHING RETURNING id`.pipe(
        Effect.flatMap((rows) =>
          rows.length === 1 ? Effect.void : Effect.fail(new Store.DuplicateReference({ reference }))
        )
      )
  }
}
