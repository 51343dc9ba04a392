/**
 * The SQL adapter of core's `Store.WebhookEndpointsStore`: a merchant's endpoints, their
 * secrets kept as core's `SecretSealer` sealed them (the server's seals under the master key:
 * `Webhooks/Secrets`, sealed again at start by `Webhooks/Sealer` through `secretsNotLike` and
 * `storeResealed`). Deleting keeps the row (its log stays) and fails what was still to be sent. The
 * delivery log and the workers' queries are `Sql/WebhookDeliveries`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Ids, Store, Webhook, WebhookEndpoint } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import { fromDate, fromDateOrNull, int, one, repository, toDate } from "./Repository.js"

export interface EndpointRow {
  readonly id: string
  readonly merchant_id: string
  readonly environment: Ids.Environment
  readonly url: string
  readonly enabled_events: ReadonlyArray<string>
  readonly description: string | null
  readonly status: Webhook.EndpointStatus
  readonly status_reason: string | null
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_secret_expires_at: Date | null
  readonly failing_since: Date | null
  readonly created_at: Date
}

export const endpointColumns = `id, merchant_id, environment, url, enabled_events, description, status, status_reason,
  secret, previous_secret, previous_secret_expires_at, failing_since, created_at`

export const endpointFromRow = (row: EndpointRow): Webhook.Endpoint => ({
  id: row.id,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment,
  url: row.url,
  enabledEvents: row.enabled_events,
  description: row.description,
  status: row.status,
  statusReason: row.status_reason,
  failingSince: fromDateOrNull(row.failing_since),
  createdAt: fromDate(row.created_at)
})

// The two-key advisory lock a registration takes for its merchant's environment (apart from the
// migrations' one-key lock and the delivery claims' `7_302_620`).
const EndpointsLock = 7_302_621

const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const owned = (owner: WebhookEndpoint.Owner) =>
    owner.environment === undefined
      ? sql`merchant_id = ${owner.merchantId}`
      : sql`merchant_id = ${owner.merchantId} AND environment = ${owner.environment}`

  const findRow = (owner: WebhookEndpoint.Owner, id: string, lock = false) =>
    !Ids.isUuid(id) || !Ids.isUuid(owner.merchantId)
      ? Effect.succeed(undefined)
      : sql<EndpointRow>`SELECT ${sql.literal(endpointColumns)} FROM webhook_endpoints
          WHERE id = ${id} AND ${owned(owner)} AND deleted_at IS NULL ${sql.literal(lock ? "FOR UPDATE" : "")}`.pipe(
          Effect.map((rows) => rows[0])
        )

  return {
    // The count and the insert hold the tenant's lock, so two processes registering at once cannot both pass.
    create: (tenant: Ids.Tenant, input: WebhookEndpoint.NewEndpoint, now: DateTime.Utc, max: number) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(${EndpointsLock}::int,
            hashtext(${tenant.merchantId} || ':' || ${tenant.environment}))`
          const [count] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints
            WHERE merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment}
              AND deleted_at IS NULL`
          if (int(count!.n) >= max) return undefined
          const rows = yield* sql<EndpointRow>`INSERT INTO webhook_endpoints
              (id, merchant_id, environment, url, enabled_events, description, status, secret, created_at)
            VALUES (${input.id}, ${tenant.merchantId}, ${tenant.environment}, ${input.url},
              ${input.enabledEvents as Array<string>}::text[], ${input.description}, 'ENABLED',
              ${input.secret}, ${toDate(now)})
            RETURNING ${sql.literal(endpointColumns)}`
          return endpointFromRow(rows[0]!)
        })
      ),

    find: (owner: WebhookEndpoint.Owner, id: string) =>
      Effect.map(findRow(owner, id), (row) => (row === undefined ? undefined : endpointFromRow(row))),

    sealedSecrets: (owner: WebhookEndpoint.Owner, id: string) =>
      Effect.map(findRow(owner, id), (row) =>
        row === undefined
          ? undefined
          : {
              secret: row.secret,
              previousSecret: row.previous_secret,
              previousSecretExpiresAt: fromDateOrNull(row.previous_secret_expires_at)
            }
      ),

    list: (owner: WebhookEndpoint.Owner, page: { readonly limit: number; readonly offset: number }) =>
      !Ids.isUuid(owner.merchantId)
        ? Effect.succeed([])
        : sql<EndpointRow>`SELECT ${sql.literal(endpointColumns)} FROM webhook_endpoints
            WHERE ${owned(owner)} AND deleted_at IS NULL ORDER BY position DESC
            LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(Effect.map((rows) => rows.map(endpointFromRow))),

    update: (owner: WebhookEndpoint.Owner, id: string, changes: WebhookEndpoint.EndpointChanges) =>
      Effect.gen(function* () {
        if ((yield* findRow(owner, id)) === undefined) return undefined
        const set = [sql`id = id`]
        if (changes.url !== undefined) set.push(sql`url = ${changes.url}`)
        if (changes.enabledEvents !== undefined)
          set.push(sql`enabled_events = ${changes.enabledEvents as Array<string>}::text[]`)
        if (changes.description !== undefined) set.push(sql`description = ${changes.description}`)
        if (changes.status === "ENABLED")
          set.push(sql`status = 'ENABLED', status_reason = NULL, failing_since = NULL`)
        if (changes.status === "DISABLED")
          set.push(
            sql`status_reason = CASE WHEN status = 'DISABLED' THEN status_reason ELSE ${Webhook.DisabledByMerchant} END, status = 'DISABLED'`
          )
        const rows = yield* sql<EndpointRow>`UPDATE webhook_endpoints SET ${sql.csv(set)}
          WHERE id = ${id} RETURNING ${sql.literal(endpointColumns)}`
        return one(endpointFromRow)(rows)
      }),

    remove: (owner: WebhookEndpoint.Owner, id: string, now: DateTime.Utc) =>
      Effect.gen(function* () {
        const row = yield* findRow(owner, id)
        if (row === undefined) return undefined
        yield* sql`UPDATE webhook_endpoints SET deleted_at = ${toDate(now)}, status = 'DISABLED' WHERE id = ${id}`
        yield* sql`UPDATE webhook_deliveries SET status = 'FAILED', error = 'the endpoint was deleted',
            attempted_at = ${toDate(now)}, duration_ms = 0
          WHERE endpoint_id = ${id} AND status = 'PENDING'`
        return endpointFromRow(row)
      }),

    rotate: (owner: WebhookEndpoint.Owner, id: string, secret: string, previousExpiresAt: DateTime.Utc) =>
      Effect.gen(function* () {
        if ((yield* findRow(owner, id, true)) === undefined) return false
        yield* sql`UPDATE webhook_endpoints SET previous_secret = secret,
            previous_secret_expires_at = ${toDate(previousExpiresAt)}, secret = ${secret}
          WHERE id = ${id}`
        return true
      })
  }
})

export const storeLayer: Layer.Layer<Store.WebhookEndpointsStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.WebhookEndpointsStore,
  Effect.map(make, (store): Store.WebhookEndpointsStoreService => repository(store))
)

/** An endpoint's stored secrets, as the master keys' sealer reads and writes them (`Webhooks/Sealer`). */
export interface StoredSecrets {
  readonly id: string
  readonly secret: string
  readonly previous_secret: string | null
}

/** The endpoints with a secret that does not match `pattern` (`LIKE`): not sealed under the current key. */
export const secretsNotLike = (
  pattern: string
): Effect.Effect<ReadonlyArray<StoredSecrets>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<StoredSecrets>`
      SELECT id, secret, previous_secret FROM webhook_endpoints
      WHERE secret NOT LIKE ${pattern} OR previous_secret NOT LIKE ${pattern}`
  )

/**
 * Stores an endpoint's secrets sealed again, both together, and only if the row is still as read
 * (`stored`: a rotation in between wins); whether it was.
 */
export const storeResealed = (
  stored: StoredSecrets,
  secret: string,
  previous: string | null
): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`UPDATE webhook_endpoints SET secret = ${secret}, previous_secret = ${previous}
        WHERE id = ${stored.id} AND secret = ${stored.secret}
          AND previous_secret IS NOT DISTINCT FROM ${stored.previous_secret} RETURNING id`,
      (rows) => rows.length > 0
    )
  )
