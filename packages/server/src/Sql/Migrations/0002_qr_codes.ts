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
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
ALTER TABLE outlets ADD CONSTRAINT outlets_merchant_id UNIQUE (id, merchant_id);

CREATE TABLE qr_codes (
  id uuid PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
