/**
 * The SQL of the migrations that create and reshape the tables (`Migrations` runs them, in order). Frozen:
 * a migration that has shipped is never edited; the next one changes what it made.
 */

const environment = "environment text NOT NULL CHECK (environment IN ('test', 'live'))"

export const init = `
CREATE TABLE customers (
  id uuid PRIMARY KEY,
  ${environment},
  phone text NOT NULL,
  name text,
  created_at timestamptz NOT NULL,
  CONSTRAINT customers_phone UNIQUE (environment, phone)
);

CREATE TABLE merchants (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  city text NOT NULL,
  mcc text NOT NULL,
  fee_bps integer NOT NULL CHECK (fee_bps BETWEEN 0 AND 10000),
  mandates_live boolean NOT NULL,
  subscriptions_live boolean NOT NULL,
  sandbox_payer_id uuid NOT NULL REFERENCES customers (id),
  created_at timestamptz NOT NULL
);

CREATE TABLE outlets (
  id serial PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  name text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX outlets_merchant ON outlets (merchant_id, id);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  kind text NOT NULL CHECK (kind IN ('secret', 'publishable')),
  scopes text[] NOT NULL,
  key_hash text NOT NULL CONSTRAINT api_keys_hash UNIQUE,
  key_prefix text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id, created_at);

CREATE TABLE mandates (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  reference text NOT NULL,
  status text NOT NULL CHECK (status IN ('INITIATED', 'ACTIVE', 'DECLINED', 'REVOKED', 'EXPIRED', 'SUSPENDED')),
  title text NOT NULL,
  description text,
  per_charge_cap bigint NOT NULL CHECK (per_charge_cap > 0),
  period_cap bigint CHECK (period_cap > 0),
  period text CHECK (period = 'MONTH'),
  period_key text,
  period_charged bigint NOT NULL CHECK (period_charged >= 0),
  return_url text,
  customer_id uuid REFERENCES customers (id),
  setup_expires_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  approved_at timestamptz,
  revoked_at timestamptz,
  revoked_by text CHECK (revoked_by IN ('CUSTOMER', 'MERCHANT', 'SERVICE')),
  declined_at timestamptz,
  expired_at timestamptz,
  created_at timestamptz NOT NULL,
  -- The last line of defence for the caps: a period can never be overrun, whatever the code does.
  CHECK (period_cap IS NULL OR period_charged <= period_cap),
  CONSTRAINT mandates_reference UNIQUE (merchant_id, environment, reference)
);
CREATE INDEX mandates_list ON mandates (merchant_id, environment, created_at DESC, position DESC);
CREATE INDEX mandates_customer ON mandates (customer_id, created_at DESC, position DESC) WHERE customer_id IS NOT NULL;
-- The expiry sweep: lapsed approval links, and lifetimes run out.
CREATE INDEX mandates_setup_due ON mandates (setup_expires_at) WHERE status = 'INITIATED';
CREATE INDEX mandates_lifetime_due ON mandates (expires_at) WHERE status IN ('ACTIVE', 'SUSPENDED');

CREATE TABLE mandate_charges (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  mandate_id uuid NOT NULL REFERENCES mandates (id),
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  customer_id uuid NOT NULL REFERENCES customers (id),
  amount bigint NOT NULL CHECK (amount > 0),
  description text NOT NULL,
  reference text NOT NULL,
  fee bigint NOT NULL CHECK (fee >= 0),
  net_amount bigint NOT NULL CHECK (net_amount >= 0),
  period_key text NOT NULL,
  period_charged bigint NOT NULL CHECK (period_charged >= 0),
  created_at timestamptz NOT NULL,
  CHECK (fee + net_amount = amount)
);
CREATE INDEX mandate_charges_mandate ON mandate_charges (mandate_id, created_at DESC, position DESC);

CREATE TABLE challenges (
  id uuid PRIMARY KEY,
  subject_kind text NOT NULL CHECK (subject_kind IN ('mandate', 'checkout')),
  subject_id text NOT NULL,
  customer_id uuid NOT NULL REFERENCES customers (id),
  ${environment},
  code_hash text NOT NULL,
  attempts integer NOT NULL CHECK (attempts >= 0),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);

CREATE TABLE idempotency_keys (
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  method text NOT NULL,
  path text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  response_status integer,
  response_headers jsonb,
  response_body text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, environment, method, path, key),
  -- A response is stored whole or not at all.
  CHECK ((response_status IS NULL) = (response_headers IS NULL) AND (response_status IS NULL) = (response_body IS NULL))
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- The outbox. The envelope is json, not jsonb: json keeps the text exactly as written (jsonb reorders
-- keys), and the outbox stores exactly what will be sent. Event types are not a CHECK: the catalogue grows.
CREATE TABLE events (
  id text PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY CONSTRAINT events_position UNIQUE,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  type text NOT NULL,
  created_at timestamptz NOT NULL,
  envelope json NOT NULL,
  -- For the delivery worker.
  delivered_at timestamptz,
  delivery_attempts integer NOT NULL DEFAULT 0 CHECK (delivery_attempts >= 0),
  next_delivery_at timestamptz
);
CREATE INDEX events_merchant ON events (merchant_id, position DESC);

CREATE TABLE notifications (
  id text PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  customer_id uuid NOT NULL REFERENCES customers (id),
  ${environment},
  kind text NOT NULL,
  title text NOT NULL,
  body text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX notifications_customer ON notifications (customer_id, created_at DESC, position DESC);

-- The double-entry ledger. Account ids are derived from what they belong to (customer:<id>,
-- merchant:<environment>:<id>, fee:<environment>, funding:<environment>), so each exists at most once.
CREATE TABLE ledger_accounts (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('customer', 'merchant', 'fee', 'funding')),
  ${environment},
  customer_id uuid CONSTRAINT ledger_accounts_customer UNIQUE REFERENCES customers (id),
  merchant_id uuid REFERENCES merchants (id),
  balance bigint NOT NULL,
  wallet_limit bigint CHECK (wallet_limit >= 0),
  frozen boolean NOT NULL DEFAULT false,
  blocked_by_rules boolean NOT NULL DEFAULT false,
  time_zone text,
  created_at timestamptz NOT NULL,
  -- Only the funding account (where sandbox money comes from) may go below zero.
  CHECK (kind = 'funding' OR balance >= 0),
  CHECK ((kind = 'customer') = (customer_id IS NOT NULL) AND (kind = 'customer') = (time_zone IS NOT NULL)),
  CHECK ((kind = 'merchant') = (merchant_id IS NOT NULL))
);

-- One row per transfer id: a retried transfer can never move money twice.
CREATE TABLE ledger_transfers (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('payment', 'funding')),
  ${environment},
  merchant_id uuid REFERENCES merchants (id),
  customer_id uuid NOT NULL REFERENCES customers (id),
  amount bigint NOT NULL CHECK (amount > 0),
  fee bigint NOT NULL CHECK (fee >= 0 AND fee <= amount),
  memo text NOT NULL,
  created_at timestamptz NOT NULL,
  CHECK ((kind = 'payment') = (merchant_id IS NOT NULL))
);

CREATE TABLE ledger_entries (
  transfer_id text NOT NULL REFERENCES ledger_transfers (id),
  account_id text NOT NULL REFERENCES ledger_accounts (id),
  amount bigint NOT NULL CHECK (amount <> 0),
  PRIMARY KEY (transfer_id, account_id)
);

-- The entries of a transfer sum to zero, checked when the transaction commits.
CREATE FUNCTION ledger_transfer_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT sum(amount) FROM ledger_entries WHERE transfer_id = NEW.transfer_id) <> 0 THEN
    RAISE EXCEPTION 'ledger transfer % is not balanced', NEW.transfer_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT OR UPDATE ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_transfer_balanced();
`

/**
 * QR codes, their hosted PNGs and the payments they produce.
 *
 * - The `qrid` is the scheme's key: a scanned payload names its code by `qrid` alone, so it is unique
 *   across merchants and environments, not per tenant. The reference is unique per tenant, like mandates.
 * - A code's outlet is one of its merchant's (a composite foreign key on `(outlet_id, merchant_id)`), and
 *   a payment's merchant, environment, qrid and outlet are its code's (a composite foreign key), so a
 *   payment can never be reconciled against the wrong code or merchant, whatever the code does.
 * - The shape of each type is a CHECK: a dynamic code has an amount of at least 100 laari and an expiry;
 *   a static code has neither. An `INACTIVE` code has its `deactivated_at`, an `ACTIVE` one none.
 */
export const qrCodes = `
ALTER TABLE outlets ADD CONSTRAINT outlets_merchant_id UNIQUE (id, merchant_id);

CREATE TABLE qr_codes (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  outlet_id integer NOT NULL,
  type text NOT NULL CHECK (type IN ('STATIC', 'DYNAMIC')),
  status text NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE')),
  title text NOT NULL,
  description text,
  amount bigint,
  payload text NOT NULL,
  qrid text NOT NULL CONSTRAINT qr_codes_qrid UNIQUE,
  reference text NOT NULL,
  expires_at timestamptz,
  deactivated_at timestamptz,
  created_at timestamptz NOT NULL,
  CONSTRAINT qr_codes_outlet FOREIGN KEY (outlet_id, merchant_id) REFERENCES outlets (id, merchant_id),
  CONSTRAINT qr_codes_amount CHECK (
    CASE type WHEN 'DYNAMIC' THEN amount IS NOT NULL AND amount >= 100 ELSE amount IS NULL END
  ),
  CONSTRAINT qr_codes_expiry CHECK ((type = 'DYNAMIC') = (expires_at IS NOT NULL)),
  CONSTRAINT qr_codes_deactivated CHECK ((status = 'INACTIVE') = (deactivated_at IS NOT NULL)),
  CONSTRAINT qr_codes_reference UNIQUE (merchant_id, environment, reference),
  -- The target of qr_payments' composite foreign key.
  CONSTRAINT qr_codes_payment_key UNIQUE (id, merchant_id, environment, qrid, outlet_id)
);
CREATE INDEX qr_codes_list ON qr_codes (merchant_id, environment, created_at DESC, position DESC);
CREATE INDEX qr_codes_list_outlet
  ON qr_codes (merchant_id, environment, outlet_id, created_at DESC, position DESC);

-- The hosted PNG of a static code, one per code.
CREATE TABLE qr_images (
  qr_code_id uuid PRIMARY KEY REFERENCES qr_codes (id),
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  png bytea NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE qr_payments (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  qr_code_id uuid NOT NULL,
  qrid text NOT NULL,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  outlet_id integer NOT NULL,
  customer_id uuid NOT NULL REFERENCES customers (id),
  amount bigint NOT NULL CHECK (amount >= 100),
  fee bigint NOT NULL CHECK (fee >= 0),
  net_amount bigint NOT NULL CHECK (net_amount >= 0),
  reference text NOT NULL,
  created_at timestamptz NOT NULL,
  CONSTRAINT qr_payments_code FOREIGN KEY (qr_code_id, merchant_id, environment, qrid, outlet_id)
    REFERENCES qr_codes (id, merchant_id, environment, qrid, outlet_id),
  CONSTRAINT qr_payments_split CHECK (fee + net_amount = amount)
);
CREATE INDEX qr_payments_code ON qr_payments (qr_code_id, created_at DESC, position DESC);
-- Reconciliation: merchants and operators find a payment by the qrid recorded against it.
CREATE INDEX qr_payments_qrid ON qr_payments (qrid);
`

/**
 * Checkout sessions, the subscriptions their first payments create, and one invoice per billing cycle.
 *
 * - A session's reference is unique per tenant, like mandates; its plan (`price_*`) is set exactly in
 *   `SUBSCRIPTION` mode, where the amount paid is the plan's amount.
 * - Which moments and fields go with which status is the models' business, not CHECKs': the store keeps
 *   each field as written (the store contract writes every combination).
 * - One subscription per session (`subscriptions_checkout_session`). A subscription's tenant and reference
 *   are its session's (a composite foreign key), so its reference is unique per tenant too; a completed
 *   subscription session names the subscription that was created from it (deferred, so the service may
 *   write the session before the subscription within the transaction).
 * - `due_at` is when the renewal engine next has work for a subscription (`null`: never again); workers
 *   claim by it. It is the engine's, not the model's, and only the adapter sees it.
 * - One invoice per (subscription, period key): a cycle is chargeable exactly once. At most one invoice of
 *   a subscription is open (`PENDING` or `CHARGING`). An invoice's tenant and reference are its
 *   subscription's. Newest first is by period index, unique per subscription, so no `position` is needed.
 */
export const subscriptions = `
CREATE TABLE checkout_sessions (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  mode text NOT NULL CHECK (mode IN ('PAYMENT', 'SUBSCRIPTION')),
  status text NOT NULL CHECK (status IN ('OPEN', 'COMPLETE', 'EXPIRED', 'CANCELLED')),
  reference text NOT NULL,
  title text NOT NULL,
  description text,
  return_url text,
  amount bigint NOT NULL CHECK (amount >= 100),
  price_name text,
  price_amount bigint,
  price_interval text CHECK (price_interval IN ('WEEK', 'MONTH')),
  price_interval_count integer CHECK (price_interval_count >= 1),
  customer_id uuid REFERENCES customers (id),
  payment_id text,
  subscription_id uuid,
  expires_at timestamptz NOT NULL,
  completed_at timestamptz,
  cancelled_at timestamptz,
  expired_at timestamptz,
  created_at timestamptz NOT NULL,
  CONSTRAINT checkout_sessions_price CHECK (
    CASE mode
      WHEN 'SUBSCRIPTION' THEN price_name IS NOT NULL AND price_amount IS NOT NULL AND price_interval IS NOT NULL
        AND price_interval_count IS NOT NULL AND amount = price_amount
      ELSE price_name IS NULL AND price_amount IS NULL AND price_interval IS NULL AND price_interval_count IS NULL
    END
  ),
  CONSTRAINT checkout_sessions_reference UNIQUE (merchant_id, environment, reference),
  -- The target of subscriptions' composite foreign key.
  CONSTRAINT checkout_sessions_subscription_key UNIQUE (id, merchant_id, environment, reference)
);
-- The expiry sweep.
CREATE INDEX checkout_sessions_expiring ON checkout_sessions (expires_at) WHERE status = 'OPEN';

CREATE TABLE subscriptions (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  reference text NOT NULL,
  status text NOT NULL CHECK (status IN ('ACTIVE', 'PAST_DUE', 'CANCELLED')),
  plan_name text NOT NULL,
  amount bigint NOT NULL CHECK (amount >= 100),
  billing_interval text NOT NULL CHECK (billing_interval IN ('WEEK', 'MONTH')),
  interval_count integer NOT NULL CHECK (interval_count >= 1),
  checkout_session_id uuid NOT NULL CONSTRAINT subscriptions_checkout_session UNIQUE,
  customer_id uuid NOT NULL REFERENCES customers (id),
  billing_cycle_anchor timestamptz NOT NULL,
  current_period_index integer NOT NULL CHECK (current_period_index >= 0),
  current_period_start timestamptz NOT NULL,
  current_period_end timestamptz NOT NULL,
  next_billing_at timestamptz,
  cancel_at_period_end boolean NOT NULL,
  cancelled_at timestamptz,
  cancellation_initiator text CHECK (cancellation_initiator IN ('PAYER', 'MERCHANT', 'DUNNING', 'OPS')),
  past_due_since timestamptz,
  balance_warned_for integer CHECK (balance_warned_for >= 0),
  metadata jsonb CHECK (jsonb_typeof(metadata) = 'object'),
  created_at timestamptz NOT NULL,
  due_at timestamptz,
  CONSTRAINT subscriptions_period CHECK (current_period_start < current_period_end),
  CONSTRAINT subscriptions_reference UNIQUE (merchant_id, environment, reference),
  CONSTRAINT subscriptions_session FOREIGN KEY (checkout_session_id, merchant_id, environment, reference)
    REFERENCES checkout_sessions (id, merchant_id, environment, reference),
  -- The targets of the sessions' and the invoices' composite foreign keys.
  CONSTRAINT subscriptions_session_key UNIQUE (id, checkout_session_id),
  CONSTRAINT subscriptions_invoice_key UNIQUE (id, merchant_id, environment, reference)
);
CREATE INDEX subscriptions_list ON subscriptions (merchant_id, environment, created_at DESC, position DESC);
CREATE INDEX subscriptions_list_status
  ON subscriptions (merchant_id, environment, status, created_at DESC, position DESC);
CREATE INDEX subscriptions_customer ON subscriptions (customer_id, created_at DESC, position DESC);
-- The renewal engine's claims.
CREATE INDEX subscriptions_due ON subscriptions (due_at) WHERE due_at IS NOT NULL;

ALTER TABLE checkout_sessions ADD CONSTRAINT checkout_sessions_subscription
  FOREIGN KEY (subscription_id, id) REFERENCES subscriptions (id, checkout_session_id)
  DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE invoices (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  ${environment},
  subscription_reference text NOT NULL,
  period_index integer NOT NULL CHECK (period_index >= 0),
  period_key text NOT NULL CHECK (period_key ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  amount bigint NOT NULL CHECK (amount >= 100),
  status text NOT NULL CHECK (status IN ('PENDING', 'CHARGING', 'PAID', 'FAILED', 'VOID')),
  attempt_count integer NOT NULL CHECK (attempt_count >= 0),
  next_retry_at timestamptz,
  failure_reason text
    CHECK (failure_reason IN ('insufficient-balance', 'blocked-by-rules', 'wallet-frozen', 'executor-error')),
  payment_intent_id text,
  paid_at timestamptz,
  last_attempt_at timestamptz,
  voided_at timestamptz,
  created_at timestamptz NOT NULL,
  -- A cycle is chargeable exactly once.
  CONSTRAINT invoices_period UNIQUE (subscription_id, period_key),
  -- Newest first, and the latest cycle.
  CONSTRAINT invoices_period_index UNIQUE (subscription_id, period_index),
  CONSTRAINT invoices_subscription FOREIGN KEY (subscription_id, merchant_id, environment, subscription_reference)
    REFERENCES subscriptions (id, merchant_id, environment, reference),
  CONSTRAINT invoices_bounds CHECK (period_start < period_end)
);
-- While an invoice is unpaid, no later cycle opens.
CREATE UNIQUE INDEX invoices_open ON invoices (subscription_id) WHERE status IN ('PENDING', 'CHARGING');
`

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
