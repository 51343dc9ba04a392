/** The memory adapter of core's idempotency store: one record per scope, claimed at most once. */
import { Idempotency, Store } from "@laari/core"
import { type DateTime, HashMap, Option } from "effect"
import type { MemoryDbService } from "./MemoryDb.js"

/** The idempotency table's key: every part of the scope. */
export const scopeKey = (s: Idempotency.Scope): string =>
  JSON.stringify([s.merchantId, s.environment, s.method, s.path, s.key])

export const idempotency = (db: MemoryDbService): Store.IdempotencyStoreService => {
  const put = (scope: Idempotency.Scope, fingerprint: string, now: DateTime.Utc) =>
    db.update((t) => ({
      ...t,
      idempotency: HashMap.set(t.idempotency, scopeKey(scope), {
        scope,
        fingerprint,
        response: null,
        createdAt: now
      })
    }))
  return {
    // Memory transactions run one at a time, so a record seen here is committed and nobody else holds it.
    claim: (scope, fingerprint, now) =>
      db.modify((t): readonly [Idempotency.Claim, typeof t] => {
        const record = Option.getOrUndefined(HashMap.get(t.idempotency, scopeKey(scope)))
        if (record !== undefined) return [{ _tag: "Held", record }, t]
        const fresh: Idempotency.Record = { scope, fingerprint, response: null, createdAt: now }
        return [
          { _tag: "Claimed" },
          { ...t, idempotency: HashMap.set(t.idempotency, scopeKey(scope), fresh) }
        ]
      }),
    replace: put,
    complete: (scope, response) =>
      db.update((t) =>
        Option.match(HashMap.get(t.idempotency, scopeKey(scope)), {
          onNone: () => t,
          onSome: (r) => ({
            ...t,
            idempotency: HashMap.set(t.idempotency, scopeKey(scope), { ...r, response })
          })
        })
      ),
    purge: (now) =>
      db.modify((t) => {
        const kept = HashMap.filter(t.idempotency, (r) => !Idempotency.isExpired(r, now))
        return [HashMap.size(t.idempotency) - HashMap.size(kept), { ...t, idempotency: kept }]
      })
  }
}
