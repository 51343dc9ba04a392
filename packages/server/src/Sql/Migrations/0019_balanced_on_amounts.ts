/**
 * A transfer's entries are checked to sum to zero when one is written or its amount or transfer
 * changes, not when the roll-up marks it folded: two checks of every payment's three were of that.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `DROP TRIGGER ledger_entries_balanced ON ledger_entries;
      CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT OR UPDATE OF transfer_id, amount
        ON ledger_entries DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_transfer_balanced();`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
