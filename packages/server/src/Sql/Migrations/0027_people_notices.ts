/**
 * Messages to people on their way to the wallet provider's notification service (`People/Notices`): one
 * row per message, written in the transaction that made its reason (an invitation): the document to send,
 * which holds the invitation's link and so is blanked once delivered or expired; when it was delivered,
 * how many attempts were made and when the next is due (leased while a worker sends it), and the last
 * outcome. Independent of the people tables: it names its merchant without a foreign key.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
CREATE TABLE people_notices (
  id text PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  kind text NOT NULL CHECK (kind IN ('team_invitation')),
  merchant_id uuid NOT NULL,
  email text NOT NULL,
  document text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  delivered_at timestamptz,
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz,
  leased_until timestamptz,
  last_status integer,
  last_error text
);
CREATE INDEX people_notices_due ON people_notices (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX people_notices_merchant ON people_notices (merchant_id, created_at);
`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
