/**
 * People (`Sql/People`): accounts (`users`, one an email, kept as `Person.normalEmail` makes it: the
 * database's own lower-casing differs from JavaScript's outside ASCII, so it only checks the trim), their
 * memberships of merchants' teams, invitations, single-use recovery codes and sessions. Tokens and codes are kept only
 * as keyed hashes, passwords as memory-hard hashes, TOTP secrets sealed; none of them is ever read back
 * as it was given.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

const merchantRoles = "'owner', 'admin', 'developer', 'finance', 'support', 'viewer'"

export const text = `CREATE TABLE users (
        id uuid PRIMARY KEY,
        email text NOT NULL CHECK (email = btrim(email) AND email <> ''),
        password_hash text NOT NULL,
        must_change_password boolean NOT NULL,
        two_factor boolean NOT NULL,
        totp_secret text,
        totp_pending text,
        totp_last_step bigint,
        operator_role text CHECK (operator_role IN ('ops_admin', 'ops_support', 'ops_risk')),
        created_at timestamptz NOT NULL,
        CONSTRAINT users_email UNIQUE (email),
        CONSTRAINT users_two_factor CHECK (two_factor = (totp_secret IS NOT NULL))
      );
      CREATE TABLE memberships (
        merchant_id uuid NOT NULL REFERENCES merchants (id),
        user_id uuid NOT NULL REFERENCES users (id),
        role text NOT NULL CHECK (role IN (${merchantRoles})),
        created_at timestamptz NOT NULL,
        PRIMARY KEY (merchant_id, user_id)
      );
      CREATE INDEX memberships_user ON memberships (user_id, created_at);
      CREATE TABLE invitations (
        id uuid PRIMARY KEY,
        merchant_id uuid NOT NULL REFERENCES merchants (id),
        email text NOT NULL CHECK (email = btrim(email) AND email <> ''),
        role text NOT NULL CHECK (role IN (${merchantRoles})),
        invited_by uuid REFERENCES users (id),
        token_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        revoked_at timestamptz,
        CONSTRAINT invitations_token UNIQUE (token_hash)
      );
      CREATE INDEX invitations_merchant ON invitations (merchant_id, created_at DESC);
      CREATE TABLE recovery_codes (
        user_id uuid NOT NULL REFERENCES users (id),
        code_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        used_at timestamptz,
        PRIMARY KEY (user_id, code_hash)
      );
      CREATE TABLE user_sessions (
        id uuid PRIMARY KEY,
        token_hash text NOT NULL,
        user_id uuid NOT NULL REFERENCES users (id),
        console text NOT NULL CHECK (console IN ('dashboard', 'ops')),
        stage text NOT NULL CHECK (stage IN ('change_password', 'enrol', 'two_factor', 'full')),
        merchant_id uuid REFERENCES merchants (id),
        environment text NOT NULL CHECK (environment IN ('test', 'live')),
        signed_in_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        address text,
        user_agent text,
        ended_at timestamptz,
        CONSTRAINT user_sessions_token UNIQUE (token_hash),
        CONSTRAINT user_sessions_merchant CHECK ((console = 'dashboard') = (merchant_id IS NOT NULL))
      );
      CREATE INDEX user_sessions_open ON user_sessions (user_id, signed_in_at DESC) WHERE ended_at IS NULL;`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
