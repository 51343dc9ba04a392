/**
 * The founding tables: customers, merchants and their keys, mandates, charges, the ledger, events
 * and idempotency keys.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
CREATE TABLE customers (
  id uuid PRIMARY KEY,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  code_hash text NOT NULL,
  attempts integer NOT NULL CHECK (attempts >= 0),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);

CREATE TABLE idempotency_keys (
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
