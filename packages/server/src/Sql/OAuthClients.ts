/**
 * The SQL adapter of core's `OAuthClient.OAuthClientsStore`: OAuth clients and their access tokens,
 * stored as keyed hashes (core's `OAuthClients` hashes and decides). A token is found by its hash, never
 * cached, so a revocation holds from the next request on, in every process. The server names core's
 * service `OAuthClients` here, where its callers have always found it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Auth, Ids, OAuthClient, OAuthClients as Service } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { inTransaction, repository, toDate } from "./Repository.js"

export type Client = OAuthClient.Client
export type TokenGrant = OAuthClient.TokenGrant
export const OAuthClients = Service.OAuthClients
export type OAuthClients = Service.OAuthClients

/** Migration 0008: the clients and their tokens. */
export const schema = `
CREATE TABLE oauth_clients (
  id uuid PRIMARY KEY,
  client_id text NOT NULL CONSTRAINT oauth_clients_client_id UNIQUE,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  name text,
  scopes text[] NOT NULL,
  secret_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX oauth_clients_merchant ON oauth_clients (merchant_id, created_at);
CREATE TABLE oauth_tokens (
  id uuid PRIMARY KEY,
  client uuid NOT NULL REFERENCES oauth_clients (id),
  token_hash text NOT NULL CONSTRAINT oauth_tokens_hash UNIQUE,
  scopes text[] NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX oauth_tokens_client ON oauth_tokens (client);
`

interface ClientRow {
  readonly id: string
  readonly client_id: string
  readonly merchant_id: string
  readonly environment: string
  readonly name: string | null
  readonly scopes: ReadonlyArray<string>
  readonly secret_hash: string
  readonly created_at: Date
  readonly revoked_at: Date | null
}

const clientFromRow = (row: ClientRow): Client => ({
  id: row.id,
  clientId: row.client_id,
  merchantId: Ids.MerchantId.make(row.merchant_id),
  environment: row.environment as Ids.Environment,
  name: row.name,
  scopes: row.scopes as ReadonlyArray<Auth.Scope>,
  secretHash: row.secret_hash,
  createdAt: DateTime.unsafeMake(row.created_at),
  revokedAt: row.revoked_at === null ? null : DateTime.unsafeMake(row.revoked_at)
})

const dateOrNull = (at: DateTime.Utc | null) => (at === null ? null : toDate(at))

export const makeStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const transaction = inTransaction(sql)

  const service: OAuthClient.OAuthClientsRepo = repository({
    insertClient: (client: Client) =>
      sql`INSERT INTO oauth_clients ${sql.insert({
        id: client.id,
        client_id: client.clientId,
        merchant_id: client.merchantId,
        environment: client.environment,
        name: client.name,
        scopes: client.scopes,
        secret_hash: client.secretHash,
        created_at: toDate(client.createdAt),
        revoked_at: dateOrNull(client.revokedAt)
      })}`.pipe(Effect.asVoid),

    listClients: (merchantId: Ids.MerchantId) =>
      Ids.isUuid(merchantId)
        ? Effect.map(
            sql<ClientRow>`SELECT * FROM oauth_clients WHERE merchant_id = ${merchantId} ORDER BY created_at, id`,
            (rows) => rows.map(clientFromRow)
          )
        : Effect.succeed([]),

    findClient: (clientId: string) =>
      Effect.map(sql<ClientRow>`SELECT * FROM oauth_clients WHERE client_id = ${clientId}`, (rows) =>
        rows[0] === undefined ? undefined : clientFromRow(rows[0])
      ),

    revokeClient: (merchantId: Ids.MerchantId, clientId: string, now: DateTime.Utc) =>
      Ids.isUuid(merchantId)
        ? transaction(
            Effect.gen(function* () {
              const at = toDate(now)
              const [row] =
                yield* sql<ClientRow>`UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, ${at})
                WHERE merchant_id = ${merchantId} AND client_id = ${clientId} RETURNING *`
              if (row === undefined) return undefined
              yield* sql`UPDATE oauth_tokens SET revoked_at = ${at} WHERE client = ${row.id} AND revoked_at IS NULL`
              return clientFromRow(row)
            })
          )
        : Effect.succeed(undefined),

    insertToken: (token: OAuthClient.Token) =>
      sql`INSERT INTO oauth_tokens ${sql.insert({
        id: token.id,
        client: token.client,
        token_hash: token.tokenHash,
        scopes: token.scopes,
        expires_at: toDate(token.expiresAt),
        revoked_at: dateOrNull(token.revokedAt),
        created_at: toDate(token.createdAt)
      })}`.pipe(Effect.asVoid),

    findToken: (tokenHash: string) =>
      Effect.map(
        sql<
          ClientRow & {
            readonly token_id: string
            readonly token_hash: string
            readonly token_scopes: ReadonlyArray<string>
            readonly expires_at: Date
            readonly token_revoked_at: Date | null
            readonly token_created_at: Date
          }
        >`SELECT c.*, t.id AS token_id, t.token_hash, t.scopes AS token_scopes, t.expires_at,
            t.revoked_at AS token_revoked_at, t.created_at AS token_created_at
          FROM oauth_tokens t JOIN oauth_clients c ON c.id = t.client WHERE t.token_hash = ${tokenHash}`,
        (rows) => {
          const row = rows[0]
          if (row === undefined) return undefined
          return {
            token: {
              id: row.token_id,
              client: row.id,
              tokenHash: row.token_hash,
              scopes: row.token_scopes as ReadonlyArray<Auth.Scope>,
              expiresAt: DateTime.unsafeMake(row.expires_at),
              revokedAt: row.token_revoked_at === null ? null : DateTime.unsafeMake(row.token_revoked_at),
              createdAt: DateTime.unsafeMake(row.token_created_at)
            },
            client: clientFromRow(row)
          }
        }
      ),

    revokeToken: (client: string, tokenHash: string, now: DateTime.Utc) =>
      sql`UPDATE oauth_tokens SET revoked_at = ${toDate(now)}
        WHERE token_hash = ${tokenHash} AND client = ${client} AND revoked_at IS NULL`.pipe(Effect.asVoid)
  })
  return service
})

export const storeLayer: Layer.Layer<OAuthClient.OAuthClientsStore, never, SqlClient.SqlClient> =
  Layer.effect(OAuthClient.OAuthClientsStore, makeStore)
