/**
 * Refunds of charges, QR payments and paid invoices, and the ledger's `refund` transfers. A refund
 * names exactly one payment, by a foreign key of its own kind, so there is no refund without its payment.
 * Each payment keeps how much of it has gone back (`amount_refunded`), at most its amount: the last line
 * of defence, whatever the code does, under the payment's row lock. The money moves as a ledger transfer
 * of kind `refund` (id `refund:<refund id>`): merchant to customer, no fee (laari keeps its fee). Its
 * merchant is set like a payment's.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
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
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
