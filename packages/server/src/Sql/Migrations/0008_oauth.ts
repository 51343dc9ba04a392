/**
 * OAuth clients (`Sql/OAuthClients`) and their access tokens.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
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

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
