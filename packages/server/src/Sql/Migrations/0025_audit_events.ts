/**
 * The audit log (`Sql/AuditEvents`): one append-only row a change, in chains (a merchant's, or the
 * operator's) numbered from 1, each row holding the hash of the one before; and each chain's head, its
 * last row's number and hash, updated with every row, so deleting a chain's last rows is found too. A
 * head of seq 0 is a chain with no rows yet, made when its first row is about to be written.
 *
 * The hash chain is the proof that no row was changed; the triggers are the fence: UPDATE, DELETE and
 * TRUNCATE of `audit_events` are refused, whoever asks. Rows name their merchant without a foreign key:
 * the log records what happened and depends on no other table's rows.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `CREATE TABLE audit_events (
        id text PRIMARY KEY,
        position bigint GENERATED ALWAYS AS IDENTITY,
        chain text NOT NULL,
        seq bigint NOT NULL CHECK (seq > 0),
        merchant_id uuid,
        environment text CHECK (environment IN ('test', 'live')),
        actor_kind text NOT NULL CHECK (actor_kind IN ('user', 'api_key', 'oauth_client', 'ops_token', 'cli')),
        actor_id text NOT NULL,
        action text NOT NULL,
        resource_type text NOT NULL,
        resource_id text,
        summary jsonb NOT NULL,
        address text,
        user_agent text,
        request_id text,
        at timestamptz NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL,
        CONSTRAINT audit_events_seq UNIQUE (chain, seq),
        CONSTRAINT audit_events_chain
          CHECK (chain = CASE WHEN merchant_id IS NULL THEN 'operator' ELSE 'merchant:' || merchant_id END)
      );
      CREATE INDEX audit_events_tenant ON audit_events (merchant_id, environment, position DESC);
      CREATE INDEX audit_events_newest ON audit_events (position DESC);
      CREATE TABLE audit_heads (
        chain text PRIMARY KEY,
        seq bigint NOT NULL CHECK (seq >= 0),
        hash text NOT NULL
      );
      CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
      END
      $$;
      CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
        FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
      CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
        FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
      CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
        FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
