/**
 * Idempotency keys: rows, mapping, and the port `Store.IdempotencyStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Idempotency, type Ids, Store } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { fromDate, insideTransaction, int, json, one, repository, toDate } from "./Repository.js"
import * as WriteBehind from "./WriteBehind.js"

interface KeyRow {
  readonly merchant_id: string
  readonly environment: string
  readonly method: string
  readonly path: string
  readonly key: string
  readonly fingerprint: string
  readonly response_status: number | null
  readonly response_headers: { readonly [name: string]: string } | null
  readonly response_body: string | null
  readonly created_at: Date
}

const fromRow = (row: KeyRow): Idempotency.Record => ({
  scope: {
    merchantId: row.merchant_id as Ids.MerchantId,
    environment: row.environment as Ids.Environment,
    method: row.method,
    path: row.path,
    key: row.key
  },
  fingerprint: row.fingerprint,
  response:
    row.response_status === null
      ? null
      : { status: row.response_status, headers: row.response_headers ?? {}, body: row.response_body ?? "" },
  createdAt: fromDate(row.created_at)
})

/** lock_not_available: the wait for the key's row ran past the connection's `lock_timeout`. */
const isLockTimeout = (e: SqlError) => (e.cause as { readonly code?: unknown } | null)?.code === "55P03"

export const makeIdempotency = Effect.map(SqlClient.SqlClient, (sql) => {
  const matches = (s: Idempotency.Scope) =>
    sql`merchant_id = ${s.merchantId} AND environment = ${s.environment}
        AND method = ${s.method} AND path = ${s.path} AND key = ${s.key}`

  // The INSERT waits while another transaction holds an uncommitted row under the same key, then
  // conflicts (it committed) or goes through (it rolled back). The SELECT then locks the committed row,
  // so the decision and what follows it see a record nobody else can change before this commit.
  const claim = (
    scope: Idempotency.Scope,
    fingerprint: string,
    now: DateTime.Utc
  ): Effect.Effect<Idempotency.Claim, SqlError> =>
    Effect.gen(function* () {
      const inserted = yield* sql`INSERT INTO idempotency_keys ${sql.insert({
        merchant_id: scope.merchantId,
        environment: scope.environment,
        method: scope.method,
        path: scope.path,
        key: scope.key,
        fingerprint,
        created_at: toDate(now)
      })} ON CONFLICT DO NOTHING RETURNING key`
      if (inserted.length === 1) return { _tag: "Claimed" } as const
      const held = yield* sql<KeyRow>`SELECT * FROM idempotency_keys WHERE ${matches(scope)} FOR UPDATE`.pipe(
        Effect.map(one(fromRow))
      )
      // Purged between the two statements: claim again.
      return held === undefined
        ? yield* claim(scope, fingerprint, now)
        : ({ _tag: "Held", record: held } as const)
    }).pipe(Effect.catchIf(isLockTimeout, () => Effect.succeed<Idempotency.Claim>({ _tag: "Busy" })))

  return repository({
    claim: (scope: Idempotency.Scope, fingerprint: string, now: DateTime.Utc) =>
      Effect.zipRight(insideTransaction("IdempotencyStore.claim"), claim(scope, fingerprint, now)),

    replace: (scope: Idempotency.Scope, fingerprint: string, now: DateTime.Utc) =>
      sql`UPDATE idempotency_keys
          SET fingerprint = ${fingerprint}, created_at = ${toDate(now)},
              response_status = NULL, response_headers = NULL, response_body = NULL
          WHERE ${matches(scope)}`.pipe(Effect.asVoid),

    // In the caller's transaction, so the response commits with the command; held until its commit
    // (`WriteBehind`), with the command's own writes.
    complete: (scope: Idempotency.Scope, response: Idempotency.StoredResponse) =>
      WriteBehind.hold(sql, [`idempotency:${JSON.stringify(scope)}`], () => [
        {
          alias: "k",
          statement: sql`UPDATE idempotency_keys
            SET response_status = ${response.status}, response_headers = ${json(response.headers)}::jsonb,
                response_body = ${response.body}
            WHERE ${matches(scope)}`
        }
      ]),

    purge: (now: DateTime.Utc) => {
      const cutoff = DateTime.subtract(now, { hours: Idempotency.RetentionHours })
      return sql<{ readonly n: number | string }>`WITH purged AS (
          DELETE FROM idempotency_keys WHERE created_at <= ${toDate(cutoff)} RETURNING 1
        ) SELECT count(*) AS n FROM purged`.pipe(Effect.map((rows) => int(rows[0]?.n ?? 0)))
    }
  })
})

export const idempotencyLayer: Layer.Layer<Store.IdempotencyStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.IdempotencyStore,
  makeIdempotency
)
