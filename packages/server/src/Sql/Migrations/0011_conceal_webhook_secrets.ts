/**
 * Stored responses keep no webhook signing secret; the endpoints' own secrets are sealed by the first
 * process to start, which has the master key (`Webhooks/Sealer`). This is `Webhooks/Secrets.fingerprint`
 * in SQL, for the responses stored before it: every `"secret":"whsec_..."` of a stored response of the
 * webhook endpoints becomes its fingerprint, the rest of the text unchanged.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
UPDATE idempotency_keys
SET response_body = regexp_replace(
  response_body,
  '"secret":"whsec_[A-Za-z0-9+/=]*"',
  '"secret":"sha256:' || encode(sha256(convert_to(
    substring(response_body from '"secret":"(whsec_[A-Za-z0-9+/=]*)"'), 'UTF8')), 'base64') || '"')
WHERE path LIKE '/webhook-endpoints%' AND response_body LIKE '%"secret":"whsec\\_%'
`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
