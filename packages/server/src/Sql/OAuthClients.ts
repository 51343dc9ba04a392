/**
 * OAuth clients and their access tokens (`OAuth/Protocol.ts`): a client belongs to one merchant and
 * environment and carries the scopes its tokens may have. Client secrets and tokens are stored as keyed
 * hashes, as API keys are (`Directory.keyDigest`); a token is found by its hash, never cached, so a
 * revocation holds from the next request on, in every process.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Auth, Crypto, type Errors, Ids } from "@laari/core"
import { Context, DateTime, Effect, Layer } from "effect"
import * as Protocol from "../OAuth/Protocol.js"
import { Directory } from "./Directory.js"
import { repository, toDate } from "./Repository.js"

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

export interface Client {
  readonly id: string
  readonly clientId: string
  readonly merchantId: Ids.MerchantId
  readonly environment: Ids.Environment
  readonly name: string | null
  readonly scopes: ReadonlyArray<Auth.Scope>
  readonly secretHash: string
  readonly createdAt: DateTime.Utc
  readonly revokedAt: DateTime.Utc | null
}

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

/** What a valid access token stands for. */
export interface TokenGrant {
  readonly tokenId: string
  readonly client: Client
  readonly scopes: ReadonlyArray<Auth.Scope>
  readonly expiresAt: DateTime.Utc
}

export interface OAuthClientsService {
  /** A new client; its secret is returned here only. */
  readonly create: (input: {
    readonly merchantId: Ids.MerchantId
    readonly environment: Ids.Environment
    readonly scopes: ReadonlyArray<Auth.Scope>
    readonly name: string | null
  }) => Effect.Effect<{ readonly client: Client; readonly secret: string }, Errors.ServiceUnavailable>
  /** The merchant's clients, oldest first, revoked ones too. */
  readonly list: (merchantId: string) => Effect.Effect<ReadonlyArray<Client>, Errors.ServiceUnavailable>
  /** Revokes the client and every token it holds; `undefined` when the merchant has no such client. */
  readonly revoke: (
    merchantId: string,
    clientId: string
  ) => Effect.Effect<Client | undefined, Errors.ServiceUnavailable>
  /** The client these credentials authenticate: known, not revoked, the secret right (constant time). */
  readonly authenticate: (
    clientId: string,
    secret: string
  ) => Effect.Effect<Client | undefined, Errors.ServiceUnavailable>
  /** A new access token for `client` with `scopes`, for `Protocol.TokenLifetimeSeconds`. */
  readonly issue: (
    client: Client,
    scopes: ReadonlyArray<Auth.Scope>
  ) => Effect.Effect<{ readonly token: string; readonly expiresAt: DateTime.Utc }, Errors.ServiceUnavailable>
  /** The grant of a token that is known, unexpired and unrevoked, its client unrevoked too. */
  readonly grantOf: (token: string) => Effect.Effect<TokenGrant | undefined, Errors.ServiceUnavailable>
  /** Revokes `token` if `client` holds it (RFC 7009: anything else is ignored). */
  readonly revokeToken: (client: Client, token: string) => Effect.Effect<void, Errors.ServiceUnavailable>
}

export class OAuthClients extends Context.Tag("laari/server/OAuthClients")<
  OAuthClients,
  OAuthClientsService
>() {}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const crypto = yield* Crypto.Crypto
  const directory = yield* Directory

  const create = (input: Parameters<OAuthClientsService["create"]>[0]) =>
    Effect.gen(function* () {
      const secret = Protocol.newClientSecret(input.environment)
      const now = yield* DateTime.now
      const row = {
        id: yield* crypto.uuid,
        client_id: Protocol.newClientId(input.environment),
        merchant_id: input.merchantId,
        environment: input.environment,
        name: input.name,
        scopes: input.scopes,
        secret_hash: yield* directory.keyDigest(secret),
        created_at: toDate(now),
        revoked_at: null
      }
      const [inserted] = yield* sql<ClientRow>`INSERT INTO oauth_clients ${sql.insert(row)} RETURNING *`
      return { client: clientFromRow(inserted!), secret }
    })

  const list = (merchantId: string) =>
    Ids.isUuid(merchantId)
      ? Effect.map(
          sql<ClientRow>`SELECT * FROM oauth_clients WHERE merchant_id = ${merchantId} ORDER BY created_at, id`,
          (rows) => rows.map(clientFromRow)
        )
      : Effect.succeed([])

  const revoke = (merchantId: string, clientId: string) =>
    Ids.isUuid(merchantId)
      ? sql.withTransaction(
          Effect.gen(function* () {
            const now = toDate(yield* DateTime.now)
            const [row] =
              yield* sql<ClientRow>`UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, ${now})
              WHERE merchant_id = ${merchantId} AND client_id = ${clientId} RETURNING *`
            if (row === undefined) return undefined
            yield* sql`UPDATE oauth_tokens SET revoked_at = ${now} WHERE client = ${row.id} AND revoked_at IS NULL`
            return clientFromRow(row)
          })
        )
      : Effect.succeed(undefined)

  const authenticate = (clientId: string, secret: string) =>
    Effect.gen(function* () {
      const [row] = yield* sql<ClientRow>`SELECT * FROM oauth_clients WHERE client_id = ${clientId}`
      // The hash is computed whether or not the client exists, so timing tells nothing either way.
      const digest = yield* directory.keyDigest(secret)
      if (row === undefined || row.revoked_at !== null) return undefined
      return Crypto.constantTimeEqual(row.secret_hash, digest) ? clientFromRow(row) : undefined
    })

  const issue = (client: Client, scopes: ReadonlyArray<Auth.Scope>) =>
    Effect.gen(function* () {
      const token = Protocol.newAccessToken(client.environment)
      const now = yield* DateTime.now
      const expiresAt = DateTime.add(now, { seconds: Protocol.TokenLifetimeSeconds })
      yield* sql`INSERT INTO oauth_tokens ${sql.insert({
        id: yield* crypto.uuid,
        client: client.id,
        token_hash: yield* directory.keyDigest(token),
        scopes,
        expires_at: toDate(expiresAt),
        revoked_at: null,
        created_at: toDate(now)
      })}`
      return { token, expiresAt }
    })

  const grantOf = (token: string) =>
    Effect.gen(function* () {
      const digest = yield* directory.keyDigest(token)
      const rows = yield* sql<
        ClientRow & {
          readonly token_id: string
          readonly token_hash: string
          readonly token_scopes: ReadonlyArray<string>
          readonly expires_at: Date
          readonly token_revoked_at: Date | null
        }
      >`SELECT c.*, t.id AS token_id, t.token_hash, t.scopes AS token_scopes, t.expires_at,
          t.revoked_at AS token_revoked_at
        FROM oauth_tokens t JOIN oauth_clients c ON c.id = t.client WHERE t.token_hash = ${digest}`
      const row = rows[0]
      const now = yield* DateTime.now
      if (
        row === undefined ||
        !Crypto.constantTimeEqual(row.token_hash, digest) ||
        row.token_revoked_at !== null ||
        row.revoked_at !== null ||
        row.expires_at.getTime() <= DateTime.toEpochMillis(now)
      )
        return undefined
      return {
        tokenId: row.token_id,
        client: clientFromRow(row),
        scopes: row.token_scopes as ReadonlyArray<Auth.Scope>,
        expiresAt: DateTime.unsafeMake(row.expires_at)
      }
    })

  const revokeToken = (client: Client, token: string) =>
    Effect.gen(function* () {
      const digest = yield* directory.keyDigest(token)
      const now = toDate(yield* DateTime.now)
      yield* sql`UPDATE oauth_tokens SET revoked_at = ${now}
        WHERE token_hash = ${digest} AND client = ${client.id} AND revoked_at IS NULL`
    })

  const service: OAuthClientsService = repository({
    create,
    list,
    revoke,
    authenticate,
    issue,
    grantOf,
    revokeToken
  })
  return service
})

export const layer: Layer.Layer<OAuthClients, never, SqlClient.SqlClient | Crypto.Crypto | Directory> =
  Layer.effect(OAuthClients, make)
