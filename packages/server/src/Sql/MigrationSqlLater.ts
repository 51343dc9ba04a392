/**
 * The SQL of migrations 0004 onward that are too long to read inline in `Migrations` (the founding tables
 * are in `MigrationSql`). Frozen: a migration that has shipped is never edited; the next one changes what
 * it made.
 */
import { environment } from "./MigrationSql.js"

// One-time codes hold against online guessing: the caps count recent challenges per subject and per
// customer (an index each), a code's wallet notice is redacted once the code is spent (redacted_at, and
// an index for the job that redacts expired ones), and code hashes are keyed by a server secret, made by
// this migration (`Challenges.createCodeKey`).
export const codeHardening = `
CREATE TABLE server_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL
);

ALTER TABLE challenges ADD COLUMN redacted_at timestamptz;
CREATE INDEX challenges_subject ON challenges (subject_kind, subject_id, created_at);
CREATE INDEX challenges_customer ON challenges (customer_id, created_at);
CREATE INDEX challenges_unredacted ON challenges (expires_at) WHERE redacted_at IS NULL;

-- Codes issued before: their hashes are unsalted SHA-256 of six digits, as good as the codes. End them,
-- erase the hashes and take the codes out of the notices.
UPDATE challenges SET code_hash = '', expires_at = least(expires_at, now()), redacted_at = now();
UPDATE notifications SET body = 'This code is no longer valid.', data = data - 'code'
  WHERE kind = 'one_time_code';
`

// Webhooks (spec 6): endpoints, one delivery-log row per attempt, and the per-subject event `sequence`.
// The outbox's unused delivery columns go: deliveries are their own rows, one per endpoint and attempt.
// Events recorded before this get their sequence and subject here, envelopes rebuilt in the key order
// new ones are written in.
export const webhooks = `
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
  ${environment},
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

/**
 * One row per notice to deliver, written in the notice's transaction: the document to send (with the
 * customer's phone filled in at each attempt), where its delivery stands, and its last outcome. A code
 * notice loses its document once delivered or dropped, so the code is not kept longer than needed.
 */
export const notificationOutbox = `
CREATE TABLE notification_outbox (
  id text PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  customer_id uuid NOT NULL REFERENCES customers (id),
  ${environment},
  kind text NOT NULL,
  payload text,
  status text NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'EXPIRED', 'FAILED')),
  attempts integer NOT NULL,
  due_at timestamptz NOT NULL,
  leased_until timestamptz,
  expires_at timestamptz,
  give_up_at timestamptz NOT NULL,
  last_status integer,
  last_error text,
  done_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX notification_outbox_due ON notification_outbox (due_at) WHERE status = 'PENDING';
`

export const phoneE164 = `
WITH spelled AS (
  SELECT id, environment, created_at, phone, regexp_replace(phone, '[[:space:]().-]', '', 'g') AS bare
  FROM customers
), chosen AS (
  SELECT DISTINCT ON (environment, e164) id, environment, e164
  FROM (SELECT id, environment, created_at, '+960' || right(bare, 7) AS e164 FROM spelled
        WHERE bare ~ '^(\\+960|00960|960)?[2-9][0-9]{6}$' AND phone <> '+960' || right(bare, 7)) candidates
  WHERE NOT EXISTS (SELECT 1 FROM customers o WHERE o.environment = candidates.environment AND o.phone = candidates.e164)
  ORDER BY environment, e164, created_at, id
)
UPDATE customers SET phone = chosen.e164 FROM chosen WHERE customers.id = chosen.id;
`

/**
 * Refunds (issue 26). A refund names exactly one payment, by a foreign key of its own kind, so there is
 * no refund without its payment. Each payment keeps how much of it has gone back (`amount_refunded`), at
 * most its amount: the last line of defence, whatever the code does, under the payment's row lock.
 * The money moves as a ledger transfer of kind `refund` (id `refund:<refund id>`): merchant to customer,
 * no fee (laari keeps its fee). Its merchant is set like a payment's.
 */
export const refunds = `
ALTER TABLE mandate_charges ADD COLUMN amount_refunded bigint NOT NULL DEFAULT 0
  CONSTRAINT mandate_charges_refunded CHECK (amount_refunded >= 0 AND amount_refunded <= amount);
ALTER TABLE qr_payments ADD COLUMN amount_refunded bigint NOT NULL DEFAULT 0
  CONSTRAINT qr_payments_refunded CHECK (amount_refunded >= 0 AND amount_refunded <= amount);
ALTER TABLE invoices ADD COLUMN amount_refunded bigint NOT NULL DEFAULT 0
  CONSTRAINT invoices_refunded CHECK (amount_refunded >= 0 AND amount_refunded <= amount
    AND (amount_refunded = 0 OR status = 'PAID'));

ALTER TABLE ledger_transfers DROP CONSTRAINT ledger_transfers_kind_check,
  ADD CONSTRAINT ledger_transfers_kind_check CHECK (kind IN ('payment', 'funding', 'refund')),
  DROP CONSTRAINT ledger_transfers_check1,
  ADD CONSTRAINT ledger_transfers_kind_merchant CHECK ((kind IN ('payment', 'refund')) = (merchant_id IS NOT NULL)),
  ADD CONSTRAINT ledger_transfers_refund_fee CHECK (kind <> 'refund' OR fee = 0);

CREATE TABLE refunds (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  source_kind text NOT NULL CHECK (source_kind IN ('charge', 'qr_payment', 'invoice')),
  charge_id uuid REFERENCES mandate_charges (id),
  qr_payment_id uuid REFERENCES qr_payments (id),
  invoice_id uuid REFERENCES invoices (id),
  customer_id uuid NOT NULL REFERENCES customers (id),
  amount bigint NOT NULL CHECK (amount > 0),
  reason text CHECK (reason IN ('requested_by_customer', 'duplicate', 'fraudulent')),
  reference text,
  description text,
  created_at timestamptz NOT NULL,
  CHECK ((source_kind = 'charge') = (charge_id IS NOT NULL)
    AND (source_kind = 'qr_payment') = (qr_payment_id IS NOT NULL)
    AND (source_kind = 'invoice') = (invoice_id IS NOT NULL)),
  -- NULL references are distinct: only references given are unique.
  CONSTRAINT refunds_reference UNIQUE (merchant_id, environment, reference)
);
CREATE INDEX refunds_list ON refunds (merchant_id, environment, created_at DESC, position DESC);
CREATE INDEX refunds_charge ON refunds (charge_id) WHERE charge_id IS NOT NULL;
CREATE INDEX refunds_qr_payment ON refunds (qr_payment_id) WHERE qr_payment_id IS NOT NULL;
CREATE INDEX refunds_invoice ON refunds (invoice_id) WHERE invoice_id IS NOT NULL;
`

export const balanceTransactions = `
CREATE INDEX ledger_transfers_merchant
  ON ledger_transfers (merchant_id, environment, created_at DESC, id COLLATE "C" DESC)
  WHERE merchant_id IS NOT NULL;
`

/**
 * A token bucket per limit (`scope`) and key: its level in thousandths of a token at `at_ms` (the
 * database's clock), the tokens the last take got (`granted`, for the take's answer) and when it is full
 * again (`full_at_ms`), past which the row is the same as none and pruned. UNLOGGED: nothing here is
 * worth WAL, and a crash only refills the buckets. No index but the key, so updates stay HOT.
 */
export const rateBuckets = `
CREATE UNLOGGED TABLE rate_buckets (
  scope text NOT NULL,
  key text NOT NULL,
  level bigint NOT NULL CHECK (level >= 0),
  at_ms bigint NOT NULL,
  granted integer NOT NULL CHECK (granted >= 0),
  full_at_ms bigint NOT NULL,
  PRIMARY KEY (scope, key)
);
`

/**
 * A refund may name a charge or a QR payment by the merchant's reference (issue 26): the tenant's
 * payments with a reference, newest first, without a scan.
 */
export const paymentReferences = `
CREATE INDEX mandate_charges_reference
  ON mandate_charges (merchant_id, environment, reference, created_at DESC, position DESC);
CREATE INDEX qr_payments_reference
  ON qr_payments (merchant_id, environment, reference, created_at DESC, position DESC);
`

/**
 * Migration 0011: `Webhooks/Secrets.fingerprint` in SQL, for the responses stored before it: every
 * `"secret":"whsec_..."` of a stored response of the webhook endpoints becomes its fingerprint, the rest
 * of the text unchanged.
 */
export const scrubStoredResponses = `
UPDATE idempotency_keys
SET response_body = regexp_replace(
  response_body,
  '"secret":"whsec_[A-Za-z0-9+/=]*"',
  '"secret":"sha256:' || encode(sha256(convert_to(
    substring(response_body from '"secret":"(whsec_[A-Za-z0-9+/=]*)"'), 'UTF8')), 'base64') || '"')
WHERE path LIKE '/webhook-endpoints%' AND response_body LIKE '%"secret":"whsec\\_%'
`
