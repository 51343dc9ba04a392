/**
 * The audit log on PGlite and (with DATABASE_URL) PostgreSQL, beyond the store contract: the database
 * itself refuses to change or remove a row (its triggers), and where someone able to switch the triggers
 * off does it anyway, `Audit.verify` finds the edited row, the deleted row and the deleted last rows,
 * naming the chain and the row.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { expect } from "@effect/vitest"
import { Audit, AuditEvent, Crypto, Store } from "@laari/core"
import { Cause, Effect, Exit } from "effect"
import * as TestDatabase from "../support/TestDatabase.js"

const uuid = Effect.flatMap(Crypto.Crypto, (c) => c.uuid)

/** `count` changes noted on a fresh merchant's chain, each by its own actor; the chain and its rows. */
const noted = (count: number) =>
  Effect.gen(function* () {
    const audit = yield* Audit.Audit
    const merchantId = yield* uuid
    for (let i = 0; i < count; i++)
      yield* Audit.as({
        actor: { kind: "user", id: `usr_${i}` },
        address: "198.51.100.4",
        userAgent: "sql-audit",
        requestId: `req_${i}`
      })(
        audit.note({
          merchantId,
          environment: "live",
          action: "webhook_endpoint.update",
          resourceType: "webhook_endpoint",
          resourceId: `we_${i}`,
          fields: { url: `https://example.com/hooks/${i}`, enabled: true }
        })
      )
    const chain = AuditEvent.chainOf(merchantId)
    const rows = yield* Effect.flatMap(Store.AuditStore, (store) => store.chainRows(chain, 0, 100))
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1))
    return { chain, rows }
  })

/** What `verify` found broken in `chain`, as the lines it would print. */
const brokenIn = (chain: string) =>
  Effect.map(
    Effect.flatMap(Audit.Audit, (audit) => audit.verify),
    (verdict) => verdict.broken.filter((b) => b.chain === chain)
  )

/** Runs `effect` with the append-only triggers off, as a superuser could; on again afterwards. */
const untriggered = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.ensuring(
      Effect.zipRight(sql`ALTER TABLE audit_events DISABLE TRIGGER USER`, effect),
      Effect.orDie(sql`ALTER TABLE audit_events ENABLE TRIGGER USER`)
    )
  )

/** The database's refusal: its SQLSTATE and message. */
const refusal = (exit: Exit.Exit<unknown, unknown>) => {
  const failure = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
  expect(failure).toBeInstanceOf(SqlError)
  const cause = (failure as SqlError).cause as { readonly code?: string; readonly message?: string }
  return { code: cause.code, message: cause.message }
}

TestDatabase.eachBackend("SQL audit log", (it) => {
  const audited = <A, E>(effect: Effect.Effect<A, E, TestDatabase.TestServices | Audit.Audit>) =>
    Effect.provide(effect, Audit.Audit.Default)

  it.effect("refuses UPDATE, DELETE and TRUNCATE of its rows, whoever asks", () =>
    audited(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { chain, rows } = yield* noted(2)
        const row = rows[0]!
        const update = yield* sql`UPDATE audit_events SET summary = '{}'::jsonb WHERE id = ${row.id}`.pipe(
          Effect.exit
        )
        expect(refusal(update)).toEqual({
          code: "23001",
          message: "audit_events is append-only: UPDATE refused"
        })
        const remove = yield* sql`DELETE FROM audit_events WHERE id = ${row.id}`.pipe(Effect.exit)
        expect(refusal(remove)).toEqual({
          code: "23001",
          message: "audit_events is append-only: DELETE refused"
        })
        const truncate = yield* sql`TRUNCATE audit_events`.pipe(Effect.exit)
        expect(refusal(truncate)).toEqual({
          code: "23001",
          message: "audit_events is append-only: TRUNCATE refused"
        })
        // Nothing changed: the chain is whole.
        const after = yield* Effect.flatMap(Store.AuditStore, (store) => store.chainRows(chain, 0, 100))
        expect(after).toEqual(rows)
        expect(yield* brokenIn(chain)).toEqual([])
      })
    )
  )

  it.effect("keeps every actor kind, and refuses a row of any other", () =>
    audited(
      Effect.gen(function* () {
        const audit = yield* Audit.Audit
        const store = yield* Store.AuditStore
        const actorId = `actor_${yield* uuid}`
        for (const kind of AuditEvent.ActorKind.literals)
          yield* Audit.as({ actor: { kind, id: actorId }, address: null, userAgent: null, requestId: null })(
            audit.note({
              merchantId: null,
              environment: null,
              action: "merchant.create",
              resourceType: "merchant",
              resourceId: null
            })
          )
        const kept = yield* store.list({ actorId }, { limit: 10 })
        expect(kept.map((r) => r.actor.kind).reverse()).toEqual([...AuditEvent.ActorKind.literals])
        expect(kept.every((r) => r.chain === AuditEvent.OperatorChain)).toBe(true)
        const other = yield* store
          .append({
            ...kept[0]!,
            id: yield* uuid,
            seq: kept[0]!.seq + 100,
            actor: { kind: "robot" as never, id: actorId }
          })
          .pipe(Effect.exit)
        expect(Exit.isFailure(other) && Cause.isDie(other.cause)).toBe(true)
      })
    )
  )

  it.effect("with the triggers off, an edited row is found, naming its chain and row", () =>
    audited(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { chain, rows } = yield* noted(3)
        const edited = rows[1]!
        yield* untriggered(
          sql`UPDATE audit_events SET summary = summary || '{"enabled": false}'::jsonb WHERE id = ${edited.id}`
        )
        const broken = yield* brokenIn(chain)
        expect(broken).toEqual([{ chain, break: { _tag: "edited", seq: 2, id: edited.id } }])
        expect(AuditEvent.describe(chain, broken[0]!.break)).toBe(
          `${chain}: row 2 (${edited.id}) was changed after it was written`
        )
      })
    )
  )

  it.effect("with the triggers off, a deleted row in the middle is found at the row after it", () =>
    audited(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { chain, rows } = yield* noted(3)
        yield* untriggered(sql`DELETE FROM audit_events WHERE id = ${rows[1]!.id}`)
        expect(yield* brokenIn(chain)).toEqual([
          { chain, break: { _tag: "unlinked", seq: 3, id: rows[2]!.id, expectedSeq: 2 } }
        ])
      })
    )
  )

  it.effect("with the triggers off, a deleted last row is found against the chain's head", () =>
    audited(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { chain, rows } = yield* noted(3)
        yield* untriggered(sql`DELETE FROM audit_events WHERE id = ${rows[2]!.id}`)
        expect(yield* brokenIn(chain)).toEqual([{ chain, break: { _tag: "truncated", seq: 2, headSeq: 3 } }])
        // The triggers are on again.
        const again = yield* sql`DELETE FROM audit_events WHERE id = ${rows[1]!.id}`.pipe(Effect.exit)
        expect(refusal(again).code).toBe("23001")
      })
    )
  )
})
