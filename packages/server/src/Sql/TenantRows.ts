/**
 * The statements every tenant-scoped table shares (mandates, QR codes, payments, checkout sessions,
 * subscriptions, invoices, refunds): a row by the path's `{id}` or by id within a tenant, a row locked by id
 * for background work, a page of the tenant's rows and the rows of a parent, newest first, and an insert
 * that answers `DuplicateReference` instead of failing. One place, so a tenant condition cannot be
 * forgotten in one table's copy.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Row } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Ids, Store } from "@laari/core"
import { Effect } from "effect"
import { isStorable, lockClause, lookupKey, one } from "./Repository.js"

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
  /** `lockById`'s statement, to announce ahead (`WriteBehind.Ahead`); `undefined` for an id no row has. */
  readonly lockByIdStatement: (id: string) => Statement.Statement<Row> | undefined
  /**
   * A page of the tenant's rows, newest first: those with the filter's `status` and `reference` where it
   * names them, and meeting every condition of `where`.
   */
  readonly list: (
    tenant: Ids.Tenant,
    filter: Store.Page & { readonly status?: string | undefined; readonly reference?: string | undefined },
    where?: ReadonlyArray<Statement.Fragment>
  ) => Effect.Effect<ReadonlyArray<A>, SqlError>
  /** Every row whose `column` is `id` (a customer's, a mandate's, a code's), newest first. */
  readonly listBy: (column: string, id: string) => Effect.Effect<ReadonlyArray<A>, SqlError>
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

export const make = <A>(sql: SqlClient.SqlClient, table: string, fromRow: (row: Row) => A): TenantRows<A> => {
  const name = sql(table)
  const tenantIs = (tenant: Ids.Tenant) =>
    sql`merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment}`
  const none = Effect.succeed(undefined)
  const all = Effect.map((rows: ReadonlyArray<Row>) => rows.map(fromRow))
  const lockByIdStatement = (id: string) =>
    Ids.isUuid(id) ? sql`SELECT * FROM ${name} WHERE id = ${id.toLowerCase()} FOR UPDATE` : undefined
  return {
    find: (tenant, lookup, options) => {
      const key = lookupKey(sql, lookup)
      if (key === undefined || !Ids.isUuid(tenant.merchantId)) return none
      return sql`SELECT * FROM ${name} WHERE ${tenantIs(tenant)} AND ${key}
        ${sql.literal(lockClause(options))}`.pipe(Effect.map(one(fromRow)))
    },
    findById: (tenant, id) =>
      Ids.isUuid(id) && Ids.isUuid(tenant.merchantId)
        ? sql`SELECT * FROM ${name} WHERE id = ${id.toLowerCase()} AND ${tenantIs(tenant)}`.pipe(
            Effect.map(one(fromRow))
          )
        : none,
    lockById: (id) => {
      const statement = lockByIdStatement(id)
      return statement === undefined ? none : statement.pipe(Effect.map(one(fromRow)))
    },
    lockByIdStatement,
    list: (tenant, filter, where = []) => {
      if (!Ids.isUuid(tenant.merchantId)) return Effect.succeed([])
      if (filter.reference !== undefined && !isStorable(filter.reference)) return Effect.succeed([])
      const conditions = [tenantIs(tenant), ...where]
      if (filter.status !== undefined) conditions.push(sql`status = ${filter.status}`)
      if (filter.reference !== undefined) conditions.push(sql`reference = ${filter.reference}`)
      return sql`SELECT * FROM ${name} WHERE ${sql.and(conditions)}
        ORDER BY created_at DESC, position DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(all)
    },
    listBy: (column, id) =>
      Ids.isUuid(id)
        ? sql`SELECT * FROM ${name} WHERE ${sql(column)} = ${id} ORDER BY created_at DESC, position DESC`.pipe(
            all
          )
        : Effect.succeed([]),
    insertUnlessTaken: (row, reference) =>
      sql`INSERT INTO ${name} ${sql.insert(row)}
          ON CONFLICT ON CONSTRAINT ${sql(`${table}_reference`)} DO NOTHING RETURNING id`.pipe(
        Effect.flatMap((rows) =>
          rows.length === 1 ? Effect.void : Effect.fail(new Store.DuplicateReference({ reference }))
        )
      )
  }
}
