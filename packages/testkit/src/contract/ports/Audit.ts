/**
 * The audit log part of the store contract: rows appended to a chain link up and come back exactly as
 * written (the instant to the millisecond, the summary as the same object), concurrent notes on one chain
 * are numbered without a gap, and a tenant's list shows its rows only, filtered and paged newest first.
 * `StoreContract.suite` runs it on every adapter; every test makes its own merchant, so its own chain.
 */
import { describe, expect } from "@effect/vitest"
import { Audit, AuditEvent, Crypto, type Ids, Store } from "@laari/core"
import { DateTime, Effect, Exit } from "effect"
import {
  type It,
  T0,
  freshMerchant,
  isDefect,
  plain,
  plus,
  second,
  tenantOf,
  uuid
} from "../support/Helpers.js"

/** Someone acting, with an id unique to the test so lists can be narrowed to it. */
const who = (kind: AuditEvent.ActorKind, id: string): Audit.Who => ({
  actor: { kind, id },
  address: "203.0.113.7",
  userAgent: "contract/1.0",
  requestId: `req_${id}`
})

/** An entry of `tenant` at `at`, with `overrides`. */
const entry = (
  tenant: Ids.Tenant,
  at: DateTime.Utc,
  overrides: Partial<AuditEvent.Entry> = {}
): AuditEvent.Entry => ({
  merchantId: tenant.merchantId,
  environment: tenant.environment,
  actor: { kind: "api_key", id: "key_contract" },
  action: "refund.create",
  resourceType: "refund",
  resourceId: "re_1",
  summary: { amount: 12_550, reason: "damaged", partial: true, note: null },
  address: "203.0.113.7",
  userAgent: "contract/1.0",
  requestId: "req_1",
  at,
  ...overrides
})

/**
 * Appends `e` the way `Audit.note` does, but at a moment of the test's choosing: in a transaction, the
 * head locked, the row linked to it and hashed. The written row.
 */
const appendAt = (e: AuditEvent.Entry) =>
  Effect.gen(function* () {
    const tx = yield* Store.Transactor
    const store = yield* Store.AuditStore
    const crypto = yield* Crypto.Crypto
    return yield* tx.withTransaction(
      Effect.gen(function* () {
        const chain = AuditEvent.chainOf(e.merchantId)
        const place = AuditEvent.next(yield* store.lockHead(chain))
        const row = { ...e, id: yield* crypto.uuid, chain, ...place }
        const event: AuditEvent.Event = { ...row, hash: yield* crypto.sha256(AuditEvent.hashInput(row)) }
        yield* store.append(event)
        return event
      })
    )
  })

const allRows = (chain: string) =>
  Effect.flatMap(Store.AuditStore, (store) => store.chainRows(chain, 0, 1000))

const headOf = (chain: string) =>
  Effect.map(
    Effect.flatMap(Store.AuditStore, (store) => store.heads),
    (heads) => heads.find((h) => h.chain === chain)?.head
  )

const brokenOf = (verdict: Audit.Verdict, chain: string) => verdict.broken.filter((b) => b.chain === chain)

export const tests = (it: It): void => {
  describe("audit log", () => {
    it.effect("appended rows link up, and come back exactly as written", () =>
      Effect.gen(function* () {
        const store = yield* Store.AuditStore
        const crypto = yield* Crypto.Crypto
        const tenant = tenantOf(yield* freshMerchant())
        const chain = AuditEvent.chainOf(tenant.merchantId)
        expect(yield* store.lockHead(chain)).toBeUndefined()

        const first = yield* appendAt(entry(tenant, T0))
        const second_ = yield* appendAt(
          entry(tenant, plus(T0, second), {
            environment: null,
            actor: { kind: "user", id: "usr_1" },
            action: "merchant.update",
            resourceType: "merchant",
            resourceId: null,
            summary: AuditEvent.summarize({ name: "Cafe", phone: "+9607771234", password: "x" }),
            address: null,
            userAgent: null,
            requestId: null
          })
        )
        expect([first.seq, first.prevHash]).toEqual([1, AuditEvent.Genesis])
        expect([second_.seq, second_.prevHash]).toEqual([2, first.hash])

        const rows = yield* allRows(chain)
        expect(plain(rows)).toEqual(plain([first, second_]))
        // The instant to the millisecond, the summary the same object: the hash still holds.
        for (const row of rows) expect(yield* crypto.sha256(AuditEvent.hashInput(row))).toBe(row.hash)
        expect(DateTime.toEpochMillis(rows[0]!.at)).toBe(DateTime.toEpochMillis(T0))
        expect(rows[1]!.summary).toEqual(second_.summary)
        expect(yield* headOf(chain)).toEqual({ seq: 2, hash: second_.hash })
        expect(
          yield* Effect.flatMap(Store.Transactor, (tx) => tx.withTransaction(store.lockHead(chain)))
        ).toEqual({ seq: 2, hash: second_.hash })
        // Paging the chain as `verify` does.
        expect((yield* store.chainRows(chain, 1, 10)).map((r) => r.id)).toEqual([second_.id])
        expect((yield* store.chainRows(chain, 0, 1)).map((r) => r.id)).toEqual([first.id])
        expect(plain(yield* store.list({ tenant, actorId: "usr_1" }, { limit: 10 }))).toEqual(
          plain([second_])
        )
      })
    )

    it.effect("16 concurrent notes on one chain are numbered 1 to 16, and verify finds it whole", () =>
      Effect.gen(function* () {
        const audit = yield* Audit.Audit
        const tenant = tenantOf(yield* freshMerchant())
        const chain = AuditEvent.chainOf(tenant.merchantId)
        const tag = yield* uuid
        yield* Effect.forEach(
          Array.from({ length: 16 }, (_, i) => i),
          (i) =>
            Audit.as(who(i % 2 === 0 ? "api_key" : "user", `${tag}_${i}`))(
              audit.note({
                merchantId: tenant.merchantId,
                environment: tenant.environment,
                action: "mandate.revoke",
                resourceType: "mandate",
                resourceId: `md_${i}`,
                fields: { reason: `number ${i}`, secret: "never written" }
              })
            ),
          { concurrency: 16 }
        )
        const rows = yield* allRows(chain)
        expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
        expect(new Set(rows.map((r) => r.actor.id)).size).toBe(16)
        for (const row of rows) {
          expect(row.summary).toEqual({ reason: expect.any(String), [AuditEvent.OmittedKey]: "secret" })
          expect(row.requestId).toBe(`req_${row.actor.id}`)
        }
        const verdict = yield* audit.verify
        expect(brokenOf(verdict, chain)).toEqual([])
        expect(verdict.rows).toBeGreaterThanOrEqual(16)
        expect(yield* headOf(chain)).toEqual({ seq: 16, hash: rows[15]!.hash })
      })
    )

    it.effect("a note without an actor records nothing; a note rolled back leaves nothing", () =>
      Effect.gen(function* () {
        const audit = yield* Audit.Audit
        const tx = yield* Store.Transactor
        const tenant = tenantOf(yield* freshMerchant())
        const chain = AuditEvent.chainOf(tenant.merchantId)
        const change: Audit.Change = {
          merchantId: tenant.merchantId,
          environment: tenant.environment,
          action: "key.create",
          resourceType: "api_key",
          resourceId: "key_1"
        }
        yield* audit.note(change)
        expect(yield* allRows(chain)).toEqual([])
        expect(yield* headOf(chain)).toBeUndefined()

        // In the caller's transaction: a change rolled back has no row, and its chain no head moved.
        const failed = yield* Audit.as(who("user", "usr_rollback"))(
          tx.withTransaction(Effect.zipRight(audit.note(change), Effect.fail("rolled back" as const)))
        ).pipe(Effect.exit)
        expect(Exit.isFailure(failed)).toBe(true)
        expect(yield* allRows(chain)).toEqual([])
        expect(yield* headOf(chain)).toBeUndefined()

        yield* Audit.as(who("cli", "laari cli"))(audit.note(change))
        const rows = yield* allRows(chain)
        expect(rows.map((r) => [r.seq, r.actor.kind, r.address])).toEqual([[1, "cli", "203.0.113.7"]])
      })
    )

    it.effect("lists a tenant's rows newest first, filtered by actor, action, resource and time, paged", () =>
      Effect.gen(function* () {
        const store = yield* Store.AuditStore
        const tenant = tenantOf(yield* freshMerchant())
        const live: Ids.Tenant = { ...tenant, environment: "live" }
        const a = yield* appendAt(entry(tenant, T0))
        const b = yield* appendAt(
          entry(tenant, plus(T0, 2 * second), {
            actor: { kind: "user", id: "usr_a" },
            action: "refund.cancel"
          })
        )
        // No environment: a change to the merchant itself, seen from either environment.
        const c = yield* appendAt(
          entry(tenant, plus(T0, 4 * second), {
            environment: null,
            actor: { kind: "user", id: "usr_a" },
            action: "merchant.update",
            resourceType: "merchant",
            resourceId: tenant.merchantId
          })
        )
        const d = yield* appendAt(entry(live, plus(T0, 6 * second), { resourceId: "re_live" }))
        const e = yield* appendAt(entry(tenant, plus(T0, 8 * second), { resourceId: "re_2" }))
        const ids = (q: Store.AuditQuery, page: { limit: number; startingAfter?: string } = { limit: 10 }) =>
          Effect.map(store.list(q, page), (rows) => rows.map((r) => r.id))

        expect(yield* ids({ tenant })).toEqual([e.id, c.id, b.id, a.id])
        expect(yield* ids({ tenant: live })).toEqual([d.id, c.id])
        expect(yield* ids({ tenant, actorKind: "user" })).toEqual([c.id, b.id])
        expect(yield* ids({ tenant, actorKind: "api_key", actorId: "key_contract" })).toEqual([e.id, a.id])
        expect(yield* ids({ tenant, actorId: "usr_a" })).toEqual([c.id, b.id])
        expect(yield* ids({ tenant, action: "refund.create" })).toEqual([e.id, a.id])
        expect(yield* ids({ tenant, resourceType: "merchant" })).toEqual([c.id])
        expect(yield* ids({ tenant, resourceType: "refund", resourceId: "re_1" })).toEqual([b.id, a.id])
        expect(yield* ids({ tenant, resourceId: "re_live" })).toEqual([])
        // From inclusive, until exclusive, to the millisecond.
        expect(yield* ids({ tenant, from: plus(T0, 2 * second), to: plus(T0, 8 * second) })).toEqual([
          c.id,
          b.id
        ])
        expect(yield* ids({ tenant, from: plus(T0, 2 * second + 1) })).toEqual([e.id, c.id])
        expect(yield* ids({ tenant, to: plus(T0, 1) })).toEqual([a.id])

        // Pages of two, each after the last row of the one before.
        const first = yield* ids({ tenant }, { limit: 2 })
        expect(first).toEqual([e.id, c.id])
        const next = yield* ids({ tenant }, { limit: 2, startingAfter: first[1]! })
        expect(next).toEqual([b.id, a.id])
        expect(yield* ids({ tenant }, { limit: 2, startingAfter: a.id })).toEqual([])
        expect(yield* ids({ tenant, actorId: "usr_a" }, { limit: 10, startingAfter: e.id })).toEqual([
          c.id,
          b.id
        ])
        // A cursor the reader cannot see (the other environment's row, an unknown id) answers nothing.
        expect(yield* ids({ tenant }, { limit: 10, startingAfter: d.id })).toEqual([])
        expect(yield* ids({ tenant }, { limit: 10, startingAfter: "not-a-row" })).toEqual([])
        expect(yield* ids({ tenant: live }, { limit: 10, startingAfter: d.id })).toEqual([c.id])
      })
    )

    it.effect("never lists another merchant's rows to a tenant; the operator sees every row", () =>
      Effect.gen(function* () {
        const store = yield* Store.AuditStore
        const mine = tenantOf(yield* freshMerchant())
        const theirs = tenantOf(yield* freshMerchant())
        const actor = { kind: "api_key" as const, id: `key_${yield* uuid}` }
        const a = yield* appendAt(entry(mine, T0, { actor }))
        const b = yield* appendAt(entry(theirs, plus(T0, second), { actor }))
        const c = yield* appendAt(entry(theirs, plus(T0, 2 * second), { actor, environment: null }))
        // A change naming no merchant: the operator's chain, never a tenant's.
        const o = yield* appendAt(
          entry(tenantOf(yield* freshMerchant()), plus(T0, 3 * second), {
            merchantId: null,
            environment: null,
            actor,
            action: "merchant.create",
            resourceType: "merchant"
          })
        )
        expect(o.chain).toBe(AuditEvent.OperatorChain)
        const ids = (q: Store.AuditQuery, page: { limit: number; startingAfter?: string } = { limit: 10 }) =>
          Effect.map(store.list(q, page), (rows) => rows.map((r) => r.id))

        expect(yield* ids({ tenant: mine, actorId: actor.id })).toEqual([a.id])
        expect(yield* ids({ tenant: theirs, actorId: actor.id })).toEqual([c.id, b.id])
        // Their row as the cursor: nothing, never the rows after it.
        expect(yield* ids({ tenant: mine }, { limit: 10, startingAfter: c.id })).toEqual([])
        expect(yield* ids({ tenant: mine }, { limit: 10, startingAfter: b.id })).toEqual([])
        expect(yield* ids({ tenant: { merchantId: "not-a-merchant", environment: "test" } })).toEqual([])
        // Each merchant's chain is its own, numbered from 1.
        expect([a.seq, b.seq, c.seq]).toEqual([1, 1, 2])
        expect(yield* ids({ actorId: actor.id })).toEqual([o.id, c.id, b.id, a.id])
        expect(yield* ids({ actorId: actor.id }, { limit: 1, startingAfter: c.id })).toEqual([b.id])
        expect(yield* ids({ tenant: mine }, { limit: 10, startingAfter: o.id })).toEqual([])
      })
    )

    it.effect("refuses a row whose place in its chain is taken", () =>
      Effect.gen(function* () {
        const store = yield* Store.AuditStore
        const tenant = tenantOf(yield* freshMerchant())
        const a = yield* appendAt(entry(tenant, T0))
        const again = yield* store.append({ ...a, id: yield* uuid }).pipe(Effect.exit)
        expect(isDefect(again)).toBe(true)
        expect((yield* allRows(a.chain)).map((r) => r.id)).toEqual([a.id])
      })
    )
  })
}
