/**
 * A refund through the wallet provider's core: a `reversal` movement from the merchant's wallet there to
 * the payer's, committed pending under the payment's hold before the call, and the refund it makes once
 * posted. The movement carries what the refund row needs (`Detail`), so the settlement, the request's or
 * the resolver's, writes the same refund the built-in ledger would have.
 */
import { type DateTime, Effect, Schema } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Tenant } from "../kernel/Ids.js"
import { Laari } from "../kernel/Money.js"
import * as Movement from "../wallet/Movement.js"
import type { Remote, RemotePayer } from "../wallet/RemoteLedger.js"
import * as Refund from "./Refund.js"
import type { RefundsStoreService } from "./RefundsStore.js"

/** What a refund's movement keeps of it while pending: the refund's fields beside the movement's own. */
const Detail = Schema.Struct({
  kind: Refund.SourceKind,
  sourceId: Schema.String,
  reason: Schema.NullOr(Refund.Reason),
  // Read by `MovementsStoreService.referenceHeld`: a pending refund holds its reference.
  reference: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String)
})
type Detail = typeof Detail.Type
const detailOf = Schema.decodeUnknownSync(Detail)

/** The refund's reversal, pending: from the merchant's wallet in the core to the payer's, no fee. */
export const pending = (
  remote: Remote,
  movementId: string,
  refund: Refund.Refund,
  payer: RemotePayer,
  memo: string,
  now: DateTime.Utc
): Movement.Movement =>
  Movement.pending(
    {
      id: movementId,
      merchantId: refund.merchantId,
      environment: refund.environment,
      kind: "reversal",
      cause: "refund",
      causeId: refund.id,
      holdKey: Refund.holdKey(refund.source),
      customerId: refund.customerId,
      from: remote.ledger.merchantWallet(refund.merchantId),
      to: payer.walletId,
      feeTo: null,
      amount: Laari(refund.amount),
      fee: Laari(0),
      memo,
      detail: {
        kind: refund.source.kind,
        sourceId: refund.source.id,
        reason: refund.reason,
        reference: refund.reference,
        description: refund.description
      } satisfies Detail
    },
    now
  )

/** The refund a posted movement made, as the pending one described it. */
export const refundOf = (m: Movement.Movement): Refund.Refund => {
  const d = detailOf(m.detail)
  return {
    id: Refund.RefundId.make(m.causeId),
    merchantId: m.merchantId,
    environment: m.environment,
    source: { kind: d.kind, id: d.sourceId },
    customerId: m.customerId,
    amount: m.amount,
    reason: d.reason,
    reference: d.reference,
    description: d.description,
    // When it was decided and committed, as a charge through the core is dated.
    createdAt: m.createdAt
  }
}

/**
 * Whether the tenant's `reference` is taken by a refund, pending or made. The pending ones first, under
 * the reference's lock (so two requests with it go one after the other), then the rows: a refund settled
 * between the two reads is seen by the second, since its row and its movement's settlement commit together.
 */
export const referenceTaken = (
  remote: Remote,
  store: RefundsStoreService,
  tenant: Tenant,
  reference: string
): Effect.Effect<boolean, ServiceUnavailable> =>
  Effect.flatMap(remote.movements.referenceHeld(tenant, "refund", reference), (held) =>
    held
      ? Effect.succeed(true)
      : Effect.map(store.find(tenant, { _tag: "ByReference", reference }), (r) => r !== undefined)
  )
