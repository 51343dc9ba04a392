/**
 * The audit log: every change a person or a credential makes is one row, written in the transaction of
 * the change itself, so a change committed always has its row and a change rolled back has none.
 *
 * Who acted is the edge's to say (the HTTP layer knows the key, the client or the user, the address and
 * the request's id; the CLI knows it is the CLI): it runs the work `as(who)`. What changed is the
 * domain's: a service `note`s each change inside its transaction. Work no edge started (renewals, expiry
 * sweeps, the resolver) has no actor and records nothing: the service's own work is in the events.
 */
import { DateTime, Effect, FiberRef } from "effect"
import { Crypto } from "../kernel/Crypto.js"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Environment } from "../kernel/Ids.js"
import { Transactor } from "../kernel/Transactor.js"
import { WallClock } from "../kernel/WallClock.js"
import * as AuditEvent from "./AuditEvent.js"
import { type AuditQuery, AuditStore } from "./AuditStore.js"

/** Who is acting, and from where. */
export interface Who {
  readonly actor: AuditEvent.Actor
  readonly address: string | null
  readonly userAgent: string | null
  readonly requestId: string | null
}

/** The actor of the work running now; none for the service's own work. */
export const CurrentWho: FiberRef.FiberRef<Who | undefined> = FiberRef.unsafeMake<Who | undefined>(undefined)

/** Runs `effect` as done by `who`: each change it notes is recorded as theirs. */
export const as =
  (who: Who) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(effect, CurrentWho, who)

/** A change, as the domain knows it. */
export interface Change {
  readonly merchantId: string | null
  readonly environment: Environment | null
  /** `<resource>.<verb>`: `refund.create`. */
  readonly action: string
  readonly resourceType: string
  readonly resourceId: string | null
  /** What changed; made safe (`AuditEvent.summarize`) before it is written. */
  readonly fields?: Readonly<Record<string, unknown>> | undefined
}

/** A change to one of a tenant's resources, as most notes are. */
export const change = (
  tenant: { readonly merchantId: string; readonly environment: Environment },
  action: string,
  resource: { readonly type: string; readonly id: string | null },
  fields?: Readonly<Record<string, unknown>>
): Change => ({
  merchantId: tenant.merchantId,
  environment: tenant.environment,
  action,
  resourceType: resource.type,
  resourceId: resource.id,
  fields
})

/** What `verify` found: each chain checked, and the first break of each broken one. */
export interface Verdict {
  readonly chains: number
  readonly rows: number
  /** Each chain's head as the store keeps it: kept elsewhere, it shows a chain later rewritten whole. */
  readonly heads: ReadonlyArray<{ readonly chain: string; readonly head: AuditEvent.Head }>
  readonly broken: ReadonlyArray<{ readonly chain: string; readonly break: AuditEvent.Break }>
}

/** How many rows `verify` reads at a time. */
const VerifyPage = 1000

export class Audit extends Effect.Service<Audit>()("laari/Audit", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const store = yield* AuditStore
    const crypto = yield* Crypto
    const wall = yield* WallClock

    /** Appends `entry` to its chain: the head locked, the row linked to it and hashed, both written. */
    const append = (entry: AuditEvent.Entry) =>
      tx.withTransaction(
        Effect.gen(function* () {
          const chain = AuditEvent.chainOf(entry.merchantId)
          const place = AuditEvent.next(yield* store.lockHead(chain))
          const row = { ...entry, id: yield* crypto.uuid, chain, ...place }
          yield* store.append({ ...row, hash: yield* crypto.sha256(AuditEvent.hashInput(row)) })
        })
      )

    /** Records `change` as the current actor's, in the caller's transaction; nothing without an actor. */
    const note = (change: Change): Effect.Effect<void, ServiceUnavailable> =>
      Effect.flatMap(FiberRef.get(CurrentWho), (who) =>
        who === undefined
          ? Effect.void
          : Effect.flatMap(wall.nowMillis, (millis) =>
              append({
                merchantId: change.merchantId,
                environment: change.environment,
                actor: who.actor,
                action: change.action,
                resourceType: change.resourceType,
                resourceId: change.resourceId,
                summary: AuditEvent.summarize(change.fields ?? {}),
                address: who.address,
                userAgent: who.userAgent,
                requestId: who.requestId,
                at: DateTime.unsafeMake(millis)
              })
            )
      )

    /**
     * `effect` and the note of what it changed, in one transaction; `undefined` from `changeOf` notes
     * nothing (nothing changed: a revocation of a key already revoked).
     */
    const recording = <A, E, R>(
      effect: Effect.Effect<A, E, R>,
      changeOf: (a: A) => Change | undefined
    ): Effect.Effect<A, E | ServiceUnavailable, R> =>
      tx.withTransaction(
        Effect.tap(effect, (a) => {
          const made = changeOf(a)
          return made === undefined ? Effect.void : note(made)
        })
      )

    /** One chain checked row by row, a page at a time, then its end against its head. */
    const verifyChain = (chain: string, head: AuditEvent.Head) =>
      Effect.gen(function* () {
        let before: AuditEvent.Head | undefined
        let rows = 0
        while (true) {
          const page = yield* store.chainRows(chain, before?.seq ?? 0, VerifyPage)
          for (const row of page) {
            const broken = AuditEvent.check(before, row, yield* crypto.sha256(AuditEvent.hashInput(row)))
            if (broken !== undefined) return { rows: rows + 1, broken }
            before = { seq: row.seq, hash: row.hash }
            rows++
          }
          if (page.length < VerifyPage) break
        }
        return { rows, broken: AuditEvent.checkEnd(before, head) }
      })

    const verify: Effect.Effect<Verdict, ServiceUnavailable> = Effect.gen(function* () {
      const heads = yield* store.heads
      let rows = 0
      const broken: Array<Verdict["broken"][number]> = []
      for (const { chain, head } of heads) {
        const checked = yield* verifyChain(chain, head)
        rows += checked.rows
        if (checked.broken !== undefined) broken.push({ chain, break: checked.broken })
      }
      return { chains: heads.length, rows, heads, broken }
    })

    return {
      note,
      recording,
      verify,
      list: (
        query: AuditQuery,
        page: { readonly limit: number; readonly startingAfter?: string | undefined }
      ) => store.list(query, page)
    }
  })
}) {}
