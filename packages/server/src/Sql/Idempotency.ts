/**
 * Idempotency keys: rows, mapping, and the port `Idempotency.IdempotencyStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Idempotency, type Ids } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { fromDate, int, json, one, outsideTransaction, repository, toDate } from "./Repository.js"

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

export const makeIdempotency = Effect.map(SqlClient.SqlClient, (sql) => {
  const matches = (s: Idempotency.Scope) =>
    sql`merchant_id = ${s.merchantId} AND environment = ${s.environment}
        AND method = ${s.method} AND path = ${s.path} AND key = ${s.key}`

  const find = (scope: Idempotency.Scope) =>
    sql<KeyRow>`SELECT * FROM idempotency_keys WHERE ${matches(scope)}`.pipe(Effect.map(one(fromRow)))

  /** Inserts unless the key is taken; when taken, the record there. */
  const reserveOnce = (scope: Idempotency.Scope, fingerprint: string, now: DateTime.Utc) =>
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
      return inserted.length === 1
        ? { owned: true as const }
        : { owned: false as const, existing: yield* find(scope) }
    })

  const reserve = (
    scope: Idempotency.Scope,
    fingerprint: string,
    now: DateTime.Utc
  ): Effect.Effect<Idempotency.Record | undefined, SqlError> =>
    Effect.flatMap(reserveOnce(scope, fingerprint, now).pipe(sql.withTransaction), (outcome) =>
      outcome.owned
        ? Effect.succeed(undefined)
        : outcome.existing !== undefined
          ? Effect.succeed(outcome.existing)
          : // Released between our INSERT and SELECT: try again.
            reserve(scope, fingerprint, now)
    )

  return repository({
    // Its own transaction, committed at once, so concurrent requests see the reservation. Inside a
    // caller's transaction it would wait for it (PGlite has one session), hence refused there.
    reserve: (scope: Idempotency.Scope, fingerprint: string, now: DateTime.Utc) =>
      Effect.zipRight(outsideTransaction("IdempotencyStore.reserve"), reserve(scope, fingerprint, now)),

    // Compare-and-set on created_at: of two requests taking over the same stale record, one wins.
    takeOver: (previous: Idempotency.Record, fingerprint: string, now: DateTime.Utc) =>
      sql`UPDATE idempotency_keys
          SET fingerprint = ${fingerprint}, created_at = ${toDate(now)},
              response_status = NULL, response_headers = NULL, response_body = NULL
          WHERE ${matches(previous.scope)} AND created_at = ${toDate(previous.createdAt)}
          RETURNING key`.pipe(Effect.map((rows) => rows.length === 1)),

    // A plain statement: it runs in the caller's transaction, so the response commits with the command.
    complete: (scope: Idempotency.Scope, response: Idempotency.StoredResponse) =>
      sql`UPDATE idempotency_keys
          SET response_status = ${response.status}, response_headers = ${json(response.headers)}::jsonb,
              response_body = ${response.body}
          WHERE ${matches(scope)}`.pipe(Effect.asVoid),

    // Only a reservation: a stored response is what retries must replay.
    release: (scope: Idempotency.Scope) =>
      sql`DELETE FROM idempotency_keys WHERE ${matches(scope)} AND response_status IS NULL`.pipe(
        Effect.asVoid
      ),

    purge: (now: DateTime.Utc) => {
      const cutoff = DateTime.subtract(now, { hours: Idempotency.RetentionHours })
      return sql<{ readonly n: number | string }>`WITH purged AS (
          DELETE FROM idempotency_keys WHERE created_at <= ${toDate(cutoff)} RETURNING 1
        ) SELECT count(*) AS n FROM purged`.pipe(Effect.map((rows) => int(rows[0]?.n ?? 0)))
    }
  })
})

export const idempotencyLayer: Layer.Layer<Idempotency.IdempotencyStore, never, SqlClient.SqlClient> =
  Layer.effect(Idempotency.IdempotencyStore, makeIdempotency)
