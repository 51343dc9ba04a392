/**
 * What a pending movement holds beside a cap (`Movement.holdKey`): a dynamic QR code or a checkout
 * session it pays, the payment it refunds; counted under the key by the cause, holding its lock.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `ALTER TABLE wallet_movements ADD COLUMN hold_key text;
      CREATE INDEX wallet_movements_held ON wallet_movements (hold_key) WHERE status = 'pending';`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
