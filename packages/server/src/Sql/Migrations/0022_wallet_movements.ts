/**
 * Movements in the wallet provider's core (`Movement`): each committed pending before its call, settled
 * after; one per cause. The resolver claims pending ones by their next look; reconciliation reads a
 * Maldives day's posted ones. A customer found in the core by phone keeps its wallet id.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `ALTER TABLE customers ADD COLUMN wallet_id text;
      CREATE TABLE wallet_movements (
        id uuid PRIMARY KEY,
        merchant_id uuid NOT NULL,
        environment text NOT NULL CHECK (environment IN ('test', 'live')),
        kind text NOT NULL CHECK (kind IN ('payment', 'reversal')),
        cause text NOT NULL CHECK (cause IN ('mandate-charge', 'qr-payment', 'checkout', 'invoice', 'refund')),
        cause_id text NOT NULL,
        customer_id uuid NOT NULL,
        from_wallet text NOT NULL,
        to_wallet text NOT NULL,
        fee_wallet text,
        amount bigint NOT NULL CHECK (amount > 0),
        fee bigint NOT NULL CHECK (fee >= 0 AND fee <= amount),
        memo text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'posted', 'refused', 'cancelled')),
        reason text,
        detail jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        next_check_at timestamptz,
        checks integer NOT NULL DEFAULT 0,
        settled_at timestamptz,
        settled_by text CHECK (settled_by IN ('answer', 'status', 'resend', 'cancel')),
        posted_at timestamptz,
        CONSTRAINT wallet_movements_cause UNIQUE (cause, cause_id),
        CONSTRAINT wallet_movements_pending CHECK ((status = 'pending') = (next_check_at IS NOT NULL))
      );
      CREATE INDEX wallet_movements_due ON wallet_movements (next_check_at) WHERE status = 'pending';
      CREATE INDEX wallet_movements_posted ON wallet_movements (posted_at) WHERE status = 'posted';`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
