/**
 * One-time codes hold against online guessing: the caps count recent challenges per subject and per
 * customer (an index each), a code's wallet notice is redacted once the code is spent (redacted_at, and
 * an index for the job that redacts expired ones), and code hashes are keyed by a server secret, made by
 * this migration (the key `Sql/Challenges` reads).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { randomBytes } from "node:crypto"
import { Effect } from "effect"

export const text = `
CREATE TABLE server_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL
);

ALTER TABLE challenges ADD COLUMN redacted_at timestamptz;
CREATE INDEX challenges_subject ON challenges (subject_kind, subject_id, created_at);
CREATE INDEX challenges_customer ON challenges (customer_id, created_at);
CREATE INDEX challenges_unredacted ON challenges (expires_at) WHERE redacted_at IS NULL;

-- Codes issued before: their hashes are unsalted SHA-256 of six digits, as good as the codes. End them,
-- erase the hashes and take the codes out of the notices.
UPDATE challenges SET code_hash = '', expires_at = least(expires_at, now()), redacted_at = now();
UPDATE notifications SET body = 'This code is no longer valid.', data = data - 'code'
  WHERE kind = 'one_time_code';
`

/** The name in `server_secrets` of the key one-time codes are hashed under (`Sql/Challenges`). */
const CodeKeyName = "one_time_codes"

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.zipRight(
    sql.unsafe(text),
    // The code key, 32 random bytes, unless a process racing this one made it first.
    sql`INSERT INTO server_secrets (name, value, created_at)
    VALUES (${CodeKeyName}, ${randomBytes(32).toString("hex")}, now())
    ON CONFLICT (name) DO NOTHING`
  )
)
