/**
 * A refund names a charge or a QR payment by the merchant's reference: the tenant's payments with a
 * reference, newest first, without a scan.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
CREATE INDEX mandate_charges_reference
  ON mandate_charges (merchant_id, environment, reference, created_at DESC, position DESC);
CREATE INDEX qr_payments_reference
  ON qr_payments (merchant_id, environment, reference, created_at DESC, position DESC);
`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
