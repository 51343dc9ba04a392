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
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
CREATE TABLE checkout_sessions (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
