/**
 * Reconciliation of a Maldives day against the core's statement (`Sql/Reconciliation`): the day's run,
 * claimed as `running` by one process, and its breaks, both replaced whole by a re-run. A run's totals
 * stay null until it is done, and when it failed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `CREATE TABLE reconciliation_runs (
        date date PRIMARY KEY,
        status text NOT NULL CHECK (status IN ('running', 'clean', 'breaks', 'failed')),
        started_at timestamptz NOT NULL,
        finished_at timestamptz,
        laari_count integer CHECK (laari_count >= 0),
        laari_amount bigint CHECK (laari_amount >= 0),
        laari_fee bigint CHECK (laari_fee >= 0),
        core_count integer CHECK (core_count >= 0),
        core_amount bigint CHECK (core_amount >= 0),
        core_fee bigint CHECK (core_fee >= 0),
        break_count integer NOT NULL DEFAULT 0 CHECK (break_count >= 0),
        error text,
        CONSTRAINT reconciliation_runs_finished CHECK ((status = 'running') = (finished_at IS NULL)),
        CONSTRAINT reconciliation_runs_failed CHECK ((status = 'failed') = (error IS NOT NULL))
      );
      CREATE TABLE reconciliation_breaks (
        date date NOT NULL REFERENCES reconciliation_runs (date) ON DELETE CASCADE,
        transfer_id uuid NOT NULL,
        kind text NOT NULL
          CHECK (kind IN ('missing_in_core', 'missing_in_laari', 'amount_mismatch', 'status_mismatch')),
        laari_amount bigint,
        core_amount bigint,
        laari_fee bigint,
        core_fee bigint,
        laari_status text CHECK (laari_status IN ('pending', 'posted', 'refused', 'cancelled')),
        core_status text CHECK (core_status IN ('pending', 'posted', 'refused', 'cancelled')),
        PRIMARY KEY (date, transfer_id)
      );`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
