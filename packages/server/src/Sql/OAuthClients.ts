/**
 * The SQL adapter of core's `Store.OAuthClientsStore`: OAuth clients and their access tokens,
 * stored as keyed hashes (core's `OAuthClients` hashes and decides). A token is found by its hash, never
 * cached, so a revocation holds from the next request on, in every process.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Auth, Ids, OAuthClient, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import {
  all,
  Column,
  fromDate,
  fromDateOrNull,
  inTransaction,
  one,
  repository,
  rows,
  toDate
} from "./Repository.js"

const clients = rows<OAuthClient.Client>({
  id: Column.as("id"),
  clientId: Column.as("client_id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  name: Column.as("name"),
  scopes: Column.as("scopes"),
  secretHash: Column.as("secret_hash"),
  createdAt: Column.date("created_at"),
  revokedAt: Column.dateOrNull("revoked_at")
})

const tokens = rows<OAuthClient.Token>({
  id: Column.as("id"),
  client: Column.as("client"),
  tokenHash: Column.as("token_hash"),
  scopes: Column.as("scopes"),
  expiresAt: Column.date("expires_at"),
  revokedAt: Column.dateOrNull("revoked_at"),
  createdAt: Column.date("created_at")
})

/** A token found with its client: the client's columns, and the token's under names of their own. */
type TokenColumns = {
  readonly token_id: string
  readonly token_hash: string
  readonly token_scopes: ReadonlyArray<string>
  readonly expires_at: Date
  readonly token_revoked_at: Date | null
  readonly token_created_at: Date
}

export const makeStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const transaction = inTransaction(sql)

  const service: Store.OAuthClientsStoreService = repository({
    insertClient: (client: OAuthClient.Client) =>
      sql`INSERT INTO oauth_clients ${sql.insert(clients.toRow(client))}`.pipe(Effect.asVoid),

    listClients: (merchantId: Ids.MerchantId) =>
      Ids.isUuid(merchantId)
        ? sql`SELECT * FROM oauth_clients WHERE merchant_id = ${merchantId} ORDER BY created_at, id`.pipe(
            Effect.map(all(clients.fromRow))
          )
        : Effect.succeed([]),

    findClient: (clientId: string) =>
      sql`SELECT * FROM oauth_clients WHERE client_id = ${clientId}`.pipe(Effect.map(one(clients.fromRow))),

    revokeClient: (merchantId: Ids.MerchantId, clientId: string, now: DateTime.Utc) =>
      Ids.isUuid(merchantId)
        ? transaction(
            Effect.gen(function* () {
              const at = toDate(now)
              const [row] = yield* sql`UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, ${at})
                WHERE merchant_id = ${merchantId} AND client_id = ${clientId} RETURNING *`
              if (row === undefined) return undefined
              const client = clients.fromRow(row)
              yield* sql`UPDATE oauth_tokens SET revoked_at = ${at} WHERE client = ${client.id} AND revoked_at IS NULL`
              return client
            })
          )
        : Effect.succeed(undefined),

    insertToken: (token: OAuthClient.Token) =>
      sql`INSERT INTO oauth_tokens ${sql.insert(tokens.toRow(token))}`.pipe(Effect.asVoid),

    findToken: (tokenHash: string) =>
      sql<TokenColumns>`SELECT c.*, t.id AS token_id, t.token_hash, t.scopes AS token_scopes, t.expires_at,
          t.revoked_at AS token_revoked_at, t.created_at AS token_created_at
        FROM oauth_tokens t JOIN oauth_clients c ON c.id = t.client WHERE t.token_hash = ${tokenHash}`.pipe(
        Effect.map(
          one((row) => {
            const client = clients.fromRow(row)
            const token: OAuthClient.Token = {
              id: row.token_id,
              client: client.id,
              tokenHash: row.token_hash,
              scopes: row.token_scopes as ReadonlyArray<Auth.Scope>,
              expiresAt: fromDate(row.expires_at),
              revokedAt: fromDateOrNull(row.token_revoked_at),
              createdAt: fromDate(row.token_created_at)
            }
            return { token, client }
          })
        )
      ),

    revokeToken: (client: string, tokenHash: string, now: DateTime.Utc) =>
      sql`UPDATE oauth_tokens SET revoked_at = ${toDate(now)}
        WHERE token_hash = ${tokenHash} AND client = ${client} AND revoked_at IS NULL`.pipe(Effect.asVoid)
  })
  return service
})

export const storeLayer: Layer.Layer<Store.OAuthClientsStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.OAuthClientsStore,
  makeStore
)
