/**
 * The audit log over HTTP: a merchant reads its own rows (`GET /audit-events`, scope `audit:read`); the
 * operator reads every merchant's and its own (`GET /ops/audit-events`) and checks every chain
 * (`POST /ops/audit/verify`, what `laari audit verify` calls).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AuditEvent, Ids } from "@laari/core"
import { Schema } from "effect"
import * as Access from "../Http/Access.js"
import * as Declare from "../Http/Declare.js"
import { OffsetDateTime, Paging, Text, TextUpTo, Timestamp, WholeNumber } from "../Http/Fields.js"
import * as Problems from "../Http/Problems.js"

const nullable = (description: string) => Schema.NullOr(Text).annotations({ description })

export const AuditEventRead = Schema.Struct({
  id: Text.annotations({ description: "The row's id; the cursor of the list" }),
  chain: Text.annotations({
    description: "The chain the row is in: `merchant:<id>` for a merchant's changes, `operator` for the rest"
  }),
  seq: WholeNumber("The row's place in its chain: 1, 2, 3..."),
  merchantId: Schema.NullOr(Ids.MerchantId).annotations({
    description: "The merchant the change was made to; `null` for the operator's own (the ops token rotated)"
  }),
  environment: Schema.NullOr(Ids.Environment).annotations({
    description:
      "The environment of the change; `null` for a change to the merchant as a whole (a new outlet)"
  }),
  actor: Schema.Struct({
    kind: AuditEvent.ActorKind,
    id: Text.annotations({
      description: "The key's, client's or user's id; for the ops token and the CLI, which"
    })
  }).annotations({ description: "Who made the change" }),
  action: Text.annotations({
    description: "What was done, `<resource>.<verb>`: `refund.create`, `mandate.revoke`"
  }),
  resource: Schema.Struct({
    type: Text.annotations({ description: "The kind of thing changed: `refund`, `mandate`, `api_key`..." }),
    id: nullable("Its id; `null` when the change made none")
  }).annotations({ description: "What was changed" }),
  summary: Schema.Record({ key: Schema.String, value: AuditEvent.SummaryValue }).annotations({
    description:
      "What changed, flat: secrets, passwords and codes are never kept (`(omitted)` names them), account numbers show their last four characters"
  }),
  address: nullable("The client's address, as the service saw it"),
  userAgent: nullable("The client's `User-Agent`"),
  requestId: nullable("The request's `Request-Id`, as in its response and the service's logs"),
  createdAt: Timestamp,
  prevHash: Text.annotations({
    description: "The SHA-256 of the row before it in its chain (64 zeros for the first)"
  }),
  hash: Text.annotations({ description: "The SHA-256 this row's content and `prevHash` hash to" })
}).annotations({ identifier: "AuditEvent", description: "One change, as the audit log keeps it" })

export const AuditEventList = Schema.Struct({
  data: Schema.Array(AuditEventRead).annotations({ description: "The rows, newest first" }),
  hasMore: Schema.Boolean.annotations({ description: "Whether older rows follow the last one" })
}).annotations({ identifier: "AuditEventList" })

const filter = (description: string) => Schema.optional(TextUpTo(255).annotations({ description }))

export const ListParams = Schema.Struct({
  actor_kind: Schema.optional(AuditEvent.ActorKind),
  actor_id: filter("Only this actor's rows (with `actor_kind`, or alone)"),
  action: filter("Only rows of this action, `refund.create`"),
  resource_type: filter("Only rows about this kind of resource, `refund`"),
  resource_id: filter("Only rows about this resource"),
  from: Schema.optional(OffsetDateTime).annotations({
    description: "Only rows from this moment on (ISO 8601 with an offset)"
  }),
  to: Schema.optional(OffsetDateTime).annotations({
    description: "Only rows before this moment (ISO 8601 with an offset)"
  }),
  starting_after: filter("A row's `id`: list the ones after it (older)"),
  limit: Paging.limit
})

export class AuditApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("list", "/audit-events")
      .setUrlParams(ListParams)
      .addSuccess(AuditEventList)
      .annotate(OpenApi.Summary, "List audit events")
      .annotate(
        OpenApi.Description,
        "Every change made to the merchant in the key's environment (and to the merchant as a whole), newest first: by whom (a key, an OAuth client, a team member, the operator), what, from where. Rows are append-only and chained by hash. Page with `starting_after` while `hasMore`."
      )
  )
  .pipe(
    Declare.merchant({
      access: Access.scoped("audit:read"),
      title: "Audit log",
      description: "Who changed what, and when: the merchant's tamper-evident audit log"
    })
  ) {}

export const Verdict = Schema.Struct({
  intact: Schema.Boolean.annotations({ description: "Whether every chain checked out" }),
  chains: WholeNumber("How many chains were checked"),
  rows: WholeNumber("How many rows were read"),
  heads: Schema.Array(
    Schema.Struct({
      chain: Text.annotations({ description: "The chain: `merchant:<id>` or `operator`" }),
      seq: WholeNumber("Its last row's number (0: none yet)"),
      hash: Text.annotations({ description: "Its last row's hash" })
    })
  ).annotations({
    description:
      "Each chain's head as stored. Keep them elsewhere (daily): a chain rewritten whole, head included, no longer matches what was kept"
  }),
  broken: Schema.Array(
    Schema.Struct({
      chain: Text.annotations({ description: "The broken chain: `merchant:<id>` or `operator`" }),
      seq: WholeNumber("The first row of the chain that does not check out"),
      rowId: Schema.NullOr(Text).annotations({
        description: "Its id; `null` when rows are missing at the end"
      }),
      message: Text.annotations({ description: "What is wrong, in words" })
    })
  ).annotations({ description: "Each broken chain's first broken row" })
}).annotations({ identifier: "OpsAuditVerdict" })

export class OpsAuditApi extends HttpApiGroup.make("opsAudit")
  .add(
    HttpApiEndpoint.get("listAll", "/ops/audit-events")
      .setUrlParams(
        Schema.Struct({
          ...ListParams.fields,
          merchant_id: Schema.optional(Ids.MerchantId),
          environment: Schema.optional(Ids.Environment)
        })
      )
      .addSuccess(AuditEventList)
      .annotate(OpenApi.Summary, "List every audit event")
      .annotate(
        OpenApi.Description,
        "Every merchant's rows and the operator's own, newest first; `merchant_id` with `environment` narrows to what that merchant reads."
      )
  )
  .add(
    Problems.post("verify", "/ops/audit/verify")
      .addSuccess(Verdict)
      .annotate(OpenApi.Summary, "Verify the audit log")
      .annotate(
        OpenApi.Description,
        "Reads every chain from its first row and checks each row's hash and link and each chain's end against its head: an edited, deleted or inserted row is named."
      )
  )
  .pipe(Declare.operator({ title: "Operations: audit log" })) {}
