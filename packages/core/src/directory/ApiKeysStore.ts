/**
 * API keys, stored as keyed hashes (`ApiKeys` issues and checks them).
 */
import { Context, type DateTime, Effect } from "effect"
import type { NewKey, StoredKey } from "./ApiKey.js"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { MerchantId } from "../kernel/Ids.js"

export interface ApiKeysStoreService {
  /**
   * The secret keying the key hashes: made once per deployment (at its first use) and kept beside the
   * keys, so every process hashes a key the same way.
   */
  readonly hashKey: Effect.Effect<Uint8Array, ServiceUnavailable>
  readonly insert: (key: NewKey, now: DateTime.Utc) => Effect.Effect<void, ServiceUnavailable>
  /** The key with that hash, revoked or not (the caller refuses revoked keys). */
  readonly findByHash: (keyHash: string) => Effect.Effect<StoredKey | undefined, ServiceUnavailable>
  /** Replaces a key's hash `from` with `to`, if it still has `from`. */
  readonly upgradeHash: (keyId: string, from: string, to: string) => Effect.Effect<void, ServiceUnavailable>
  /** The merchant's keys, revoked ones too, oldest first. */
  readonly list: (merchantId: MerchantId) => Effect.Effect<ReadonlyArray<StoredKey>, ServiceUnavailable>
  /** `false` when the merchant has no such key or it was already revoked. */
  readonly revoke: (
    merchantId: MerchantId,
    keyId: string,
    now: DateTime.Utc
  ) => Effect.Effect<boolean, ServiceUnavailable>
}
export class ApiKeysStore extends Context.Tag("laari/Store/ApiKeys")<ApiKeysStore, ApiKeysStoreService>() {}
