/**
 * The book's tables, created at start (idempotent, so a restart on the same database is a no-op). The
 * rules that must never break are the database's own, not only the code's: a wallet never goes below
 * zero, and every posted transfer's entries balance, debits equal to credits, checked when the
 * transaction commits.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

const statements = [
  // A wallet's balance is its opening balance (what the operator seeded) plus its credits less its debits.
  `CREATE TABLE IF NOT EXISTS wallets (
    id text PRIMARY KEY,
    phone text NOT NULL UNIQUE,
    status text NOT NULL CHECK (status IN ('active', 'frozen', 'blocked')),
    "limit" bigint CHECK ("limit" >= 0),
    time_zone text NOT NULL,
    opening_balance bigint NOT NULL CHECK (opening_balance >= 0),
    -- The last guard against an overdraft: a race the code missed fails here instead of going negative.
    balance bigint NOT NULL CHECK (balance >= 0)
  )`,
  // Every id laari ever sent, posted or refused, and every cancelled one: an id is decided once, for good.
  // A tombstone (a cancel of an id never asked for) has only its id and status.
  `CREATE TABLE IF NOT EXISTS transfers (
    id text PRIMARY KEY,
    status text NOT NULL CHECK (status IN ('posted', 'refused', 'cancelled')),
    request_hash text,
    environment text,
    from_wallet text,
    to_wallet text,
    amount bigint,
    fee_to text,
    fee_amount bigint,
    memo text,
    kind text,
    reason text,
    posted_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (status = 'cancelled' OR (request_hash IS NOT NULL AND amount > 0)),
    CHECK ((status = 'posted') = (posted_at IS NOT NULL)),
    CHECK ((status = 'refused') = (reason IS NOT NULL))
  )`,
  // The statement of a day reads posted transfers in (posted_at, id) order.
  `CREATE INDEX IF NOT EXISTS transfers_statement ON transfers (posted_at, id) WHERE status = 'posted'`,
  `CREATE TABLE IF NOT EXISTS entries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transfer_id text NOT NULL REFERENCES transfers (id),
    wallet_id text NOT NULL REFERENCES wallets (id),
    side text NOT NULL CHECK (side IN ('debit', 'credit')),
    amount bigint NOT NULL CHECK (amount > 0)
  )`,
  `CREATE INDEX IF NOT EXISTS entries_transfer ON entries (transfer_id)`,
  `CREATE INDEX IF NOT EXISTS entries_wallet ON entries (wallet_id)`,
  // Double entry, enforced at commit: the entries of each transfer touched sum to zero.
  `CREATE OR REPLACE FUNCTION entries_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF (SELECT coalesce(sum(CASE side WHEN 'debit' THEN amount ELSE -amount END), 0)
        FROM entries WHERE transfer_id = NEW.transfer_id) <> 0 THEN
      RAISE EXCEPTION 'entries of transfer % do not balance', NEW.transfer_id;
    END IF;
    RETURN NULL;
  END $$`,
  `DROP TRIGGER IF EXISTS entries_balanced ON entries`,
  `CREATE CONSTRAINT TRIGGER entries_balanced AFTER INSERT ON entries
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION entries_balanced()`
]

/** Creates what is missing, in one transaction. */
export const migrate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(
    Effect.forEach(statements, (statement) => sql.unsafe(statement), { discard: true })
  )
})
