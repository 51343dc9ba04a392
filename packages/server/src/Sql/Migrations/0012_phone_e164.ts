/**
 * Phones were kept as typed (`+960 7771234`); lookups now compare E.164 (`Phone.normalize`), so the
 * numbers already kept are rewritten the same way (this is `Phone`'s rule of the day, frozen as SQL).
 * Of two spellings of one number in an environment the older customer gets it; the other keeps its
 * spelling (the unique key forbids two), for an operator to resolve.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
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

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
