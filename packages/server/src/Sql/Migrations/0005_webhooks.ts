/**
 * Webhooks: endpoints, one delivery-log row per attempt, and the per-subject event `sequence`.
 * The outbox's unused delivery columns go: deliveries are their own rows, one per endpoint and attempt.
 * Events recorded before this get their sequence and subject here, envelopes rebuilt in the key order
 * new ones are written in.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
CREATE TABLE event_sequences (
  subject text PRIMARY KEY,
  value bigint NOT NULL CHECK (value > 0)
);

ALTER TABLE events DROP COLUMN delivered_at, DROP COLUMN delivery_attempts, DROP COLUMN next_delivery_at;
ALTER TABLE events ADD COLUMN subject text;
UPDATE events SET subject = coalesce(envelope->'data'->'object'->>'mandate_id',
  envelope->'data'->'object'->>'subscription_id', envelope->'data'->'object'->'subscription'->>'id',
  envelope->'data'->'object'->>'qr_code_id', envelope->'data'->'object'->>'id', id);
UPDATE events e SET envelope = json_build_object('id', e.envelope->'id', 'type', e.envelope->'type',
  'api_version', e.envelope->'api_version', 'created', e.envelope->'created',
  'livemode', e.envelope->'livemode', 'sequence', n.sequence, 'data', e.envelope->'data')
  FROM (SELECT id, row_number() OVER (PARTITION BY subject ORDER BY position) AS sequence FROM events) n
  WHERE n.id = e.id;
INSERT INTO event_sequences (subject, value) SELECT subject, count(*) FROM events GROUP BY subject;
ALTER TABLE events ALTER COLUMN subject SET NOT NULL;
DROP INDEX events_merchant;
CREATE INDEX events_merchant ON events (merchant_id, environment, position DESC);

CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  url text NOT NULL,
  enabled_events text[] NOT NULL,
  description text,
  status text NOT NULL CHECK (status IN ('ENABLED', 'DISABLED')),
  status_reason text,
  -- The signing secrets must be read back to sign, so they cannot be hashed.
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  failing_since timestamptz,
  created_at timestamptz NOT NULL,
  deleted_at timestamptz,
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_merchant ON webhook_endpoints (merchant_id, environment, position DESC)
  WHERE deleted_at IS NULL;

-- The delivery log: one row per attempt, PENDING until it is made. A worker leases a due row
-- (leased_until) and records the outcome; a lease left by a process that died runs out and the attempt
-- is made again (at least once; receivers deduplicate by webhook-id).
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id),
  event_id text NOT NULL REFERENCES events (id),
  event_type text NOT NULL,
  attempt integer NOT NULL CHECK (attempt >= 1),
  resend boolean NOT NULL,
  status text NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  due_at timestamptz NOT NULL,
  leased_until timestamptz,
  response_status integer,
  response_body text,
  error text,
  duration_ms integer CHECK (duration_ms >= 0),
  attempted_at timestamptz,
  next_retry_at timestamptz,
  created_at timestamptz NOT NULL,
  CHECK ((status = 'PENDING') = (attempted_at IS NULL))
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at) WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, position DESC);

-- Secret keys holding every scope there was get the new one, as new secret keys do.
UPDATE api_keys SET scopes = array_append(scopes, 'webhooks:write')
  WHERE kind = 'secret' AND scopes @> ARRAY['mandates:write', 'payments:write', 'qr:write',
    'subscriptions:write', 'checkout:write']::text[] AND NOT scopes @> ARRAY['webhooks:write']::text[];
`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
