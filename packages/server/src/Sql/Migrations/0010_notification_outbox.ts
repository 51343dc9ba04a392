/**
 * Customer notices on their way to the wallet provider's notification service (`Notify`): one row per
 * notice to deliver, written in the notice's transaction: the document to send (with the customer's phone
 * filled in at each attempt), where its delivery stands, and its last outcome. A code notice loses its
 * document once delivered or dropped, so the code is not kept longer than needed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
CREATE TABLE notification_outbox (
  id text PRIMARY KEY,
  position bigint GENERATED ALWAYS AS IDENTITY,
  customer_id uuid NOT NULL REFERENCES customers (id),
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
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

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
