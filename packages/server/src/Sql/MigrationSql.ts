/**
 * The SQL of the first three migrations, the founding tables: merchants and their keys, mandates, charges
 * and the ledger (0001), QR codes (0002), subscriptions (0003). `MigrationSqlLater` holds 0004 onward;
 * `Migrations` runs them, in order. Frozen: a migration that has shipped is never edited; the next one
 * changes what it made.
 */

/** The column every tenant-scoped table carries (the later migrations' tables too). */
export const environment = "environment text NOT NULL CHECK (environment IN ('test', 'live'))"

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
