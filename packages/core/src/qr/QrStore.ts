/**
 * QR codes and their payments.
 */
import { Context, Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Environment } from "../kernel/Ids.js"
import type { FindById, Page, ReferencedRepo } from "../kernel/Storage.js"
import type { Payment as QrPayment, QrCode, Type as QrType } from "./QrCode.js"

export interface QrCodeFilter extends Page {
  readonly outletId?: number | undefined
  readonly type?: QrType | undefined
}

export interface QrCodesStoreService extends ReferencedRepo<QrCode, QrCodeFilter> {
  /** The code a scanned `qrid` names in `environment`, locked until the transaction ends. */
  readonly lockByQrid: (
    environment: Environment,
    qrid: string
  ) => Effect.Effect<QrCode | undefined, ServiceUnavailable>
  /** Keeps a static code's rendered PNG with it. */
  readonly saveImage: (code: QrCode, png: Uint8Array) => Effect.Effect<void, ServiceUnavailable>
  /** The PNG of a code by id, whoever's it is (served without a key: the id is unguessable). */
  readonly image: (id: string) => Effect.Effect<Uint8Array | undefined, ServiceUnavailable>
}
export class QrCodesStore extends Context.Tag("laari/Store/QrCodes")<QrCodesStore, QrCodesStoreService>() {}

export interface QrPaymentsStoreService {
  readonly insert: (payment: QrPayment) => Effect.Effect<void, ServiceUnavailable>
  readonly find: FindById<QrPayment>
  /** Newest first. */
  readonly listByCode: (qrCodeId: string) => Effect.Effect<ReadonlyArray<QrPayment>, ServiceUnavailable>
}
export class QrPaymentsStore extends Context.Tag("laari/Store/QrPayments")<
  QrPaymentsStore,
  QrPaymentsStoreService
>() {}
