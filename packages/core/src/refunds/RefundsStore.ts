/**
 * Refunds.
 */
import { Context, Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Lookup, Tenant } from "../kernel/Ids.js"
import type { DuplicateReference, Page } from "../kernel/Storage.js"
import type {
  Payment as RefundablePayment,
  ReferencedKind,
  Refund,
  Source as RefundSource
} from "./Refund.js"

export interface RefundFilter extends Page {
  readonly chargeId?: string | undefined
  readonly qrPaymentId?: string | undefined
  readonly invoiceId?: string | undefined
}

export interface RefundsStoreService {
  /** Fails with `DuplicateReference` when the tenant already has a refund with that reference. */
  readonly insert: (refund: Refund) => Effect.Effect<void, DuplicateReference | ServiceUnavailable>
  /** One of the tenant's refunds by id or reference. */
  readonly find: (tenant: Tenant, lookup: Lookup) => Effect.Effect<Refund | undefined, ServiceUnavailable>
  /** Newest first. */
  readonly list: (
    tenant: Tenant,
    filter: RefundFilter
  ) => Effect.Effect<ReadonlyArray<Refund>, ServiceUnavailable>
  /**
   * The tenant's payment `source` names, locked until the transaction ends (so refunds of one payment
   * are decided one at a time); `undefined` when there is none or it is another tenant's.
   */
  readonly lockPayment: (
    tenant: Tenant,
    source: RefundSource
  ) => Effect.Effect<RefundablePayment | undefined, ServiceUnavailable>
  /**
   * The ids of the tenant's payments of `kind` whose merchant reference is `reference`, newest first,
   * at most `limit` (a charge's reference defaults to its mandate's and a QR payment's is its code's, so
   * several may share one).
   */
  readonly paymentIdsByReference: (
    tenant: Tenant,
    kind: ReferencedKind,
    reference: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>, ServiceUnavailable>
  /** Records how much of the payment (locked by `lockPayment`) has gone back in all. */
  readonly setRefunded: (
    source: RefundSource,
    amountRefunded: number
  ) => Effect.Effect<void, ServiceUnavailable>
}
export class RefundsStore extends Context.Tag("laari/Store/Refunds")<RefundsStore, RefundsStoreService>() {}
