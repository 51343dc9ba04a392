/**
 * Handlers of the audit log's endpoints: the `Audit` service reads and verifies; these answer, rows in
 * Maldives time, newest first, a page at a time.
 */
import { Audit, AuditEvent, type AuditStore, Auth, Calendar } from "@laari/core"
import { Effect, Option } from "effect"
import * as Operation from "../Http/Operation.js"
import {
  AuditApi,
  type AuditEventList,
  type AuditEventRead,
  type ListParams,
  OpsAuditApi,
  type Verdict
} from "./Api.js"

export const eventJson = (e: AuditEvent.Event): typeof AuditEventRead.Type => ({
  id: e.id,
  chain: e.chain,
  seq: e.seq,
  merchantId: e.merchantId as typeof AuditEventRead.Type.merchantId,
  environment: e.environment,
  actor: { kind: e.actor.kind, id: e.actor.id },
  action: e.action,
  resource: { type: e.resourceType, id: e.resourceId },
  summary: e.summary,
  address: e.address,
  userAgent: e.userAgent,
  requestId: e.requestId,
  createdAt: Calendar.formatMaldives(e.at),
  prevHash: e.prevHash,
  hash: e.hash
})

const instant = (text: string | undefined) =>
  text === undefined ? undefined : Option.getOrUndefined(Calendar.parseOffsetDateTime(text))

/** The query the list's parameters ask for (their formats are checked by the schema already). */
export const queryOf = (params: typeof ListParams.Type): AuditStore.AuditQuery => ({
  actorKind: params.actor_kind,
  actorId: params.actor_id,
  action: params.action,
  resourceType: params.resource_type,
  resourceId: params.resource_id,
  from: instant(params.from),
  to: instant(params.to)
})

/** One page: a row more than asked for tells whether older ones follow. */
export const page = (
  audit: Audit.Audit,
  query: AuditStore.AuditQuery,
  params: { readonly starting_after?: string | undefined; readonly limit?: number | undefined }
) => {
  const limit = params.limit ?? 25
  return Effect.map(
    audit.list(query, { limit: limit + 1, startingAfter: params.starting_after }),
    (rows): typeof AuditEventList.Type => ({
      data: rows.slice(0, limit).map(eventJson),
      hasMore: rows.length > limit
    })
  )
}

export const verdictJson = (v: Audit.Verdict): typeof Verdict.Type => ({
  intact: v.broken.length === 0,
  chains: v.chains,
  rows: v.rows,
  heads: v.heads.map(({ chain, head }) => ({ chain, seq: head.seq, hash: head.hash })),
  broken: v.broken.map(({ chain, break: b }) => ({
    chain,
    seq: b._tag === "truncated" ? b.seq + 1 : b.seq,
    rowId: b._tag === "truncated" ? null : b.id,
    message: AuditEvent.describe(chain, b)
  }))
})

export const AuditLive = Operation.handlers(AuditApi, (handlers) =>
  Effect.gen(function* () {
    const audit = yield* Audit.Audit
    return handlers.handle("list", ({ urlParams }) =>
      Effect.flatMap(Operation.principal, (principal) =>
        page(audit, { ...queryOf(urlParams), tenant: Auth.tenantOf(principal) }, urlParams)
      )
    )
  })
)

export const OpsAuditLive = Operation.handlers(OpsAuditApi, (handlers) =>
  Effect.gen(function* () {
    const audit = yield* Audit.Audit
    return handlers
      .handle("listAll", ({ urlParams }) =>
        page(
          audit,
          {
            ...queryOf(urlParams),
            tenant:
              urlParams.merchant_id === undefined
                ? undefined
                : { merchantId: urlParams.merchant_id, environment: urlParams.environment ?? "live" }
          },
          urlParams
        )
      )
      .handle("verify", () => Effect.map(audit.verify, verdictJson))
  })
)
