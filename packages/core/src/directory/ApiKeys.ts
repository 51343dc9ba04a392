/**
 * The API-key service: issues a merchant's keys (shown once, stored as keyed hashes), resolves a
 * presented key to its principal, lists and revokes them. The hash is HMAC-SHA-256 under the store's
 * `hashKey`, through the `Crypto` port (core stays free of `node:*`); comparisons are constant-time.
 */
import { Audit, change } from "../audit/Audit.js"
import { DateTime, Effect } from "effect"
import * as ApiKey from "./ApiKey.js"
import { type KeyKind, keyPrefix, parseKeyPrefix, type Principal, type Scope } from "../kernel/Auth.js"
import { Crypto, constantTimeEqual, hex } from "../kernel/Crypto.js"
import type { Environment, MerchantId } from "../kernel/Ids.js"
import { ApiKeysStore } from "./ApiKeysStore.js"
import * as Telemetry from "../kernel/Telemetry.js"

export interface IssueRequest {
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly kind: KeyKind
  /** Default `ApiKey.defaultScopes(kind)`. */
  readonly scopes?: ReadonlyArray<Scope> | undefined
}

/** A key as issued: the only time the key itself is seen. */
export interface IssuedKey {
  readonly id: string
  readonly key: string
  readonly environment: Environment
  readonly kind: KeyKind
  readonly scopes: ReadonlyArray<Scope>
}

export class ApiKeys extends Effect.Service<ApiKeys>()("laari/ApiKeys", {
  effect: Effect.gen(function* () {
    const store = yield* ApiKeysStore
    const crypto = yield* Crypto
    const audit = yield* Audit

    /** A key's stored hash. */
    const digest = Telemetry.fn("ApiKeys.digest")((key: string) =>
      Effect.flatMap(store.hashKey, (secret) =>
        Effect.map(crypto.hmacSha256(secret, key), ApiKey.keyedDigest)
      )
    )

    /** Creates a key; the full key is returned once and only its hash is kept. */
    const issue = Telemetry.fn("ApiKeys.issue")(function* (request: IssueRequest) {
      const scopes = request.scopes ?? ApiKey.defaultScopes(request.kind)
      // 192 random bits after the prefix, as 48 hex characters.
      const key = `${keyPrefix(request.kind, request.environment)}${hex(yield* crypto.bytes(24))}`
      const id = yield* crypto.uuid
      const keyHash = yield* digest(key)
      const now = yield* DateTime.now
      const row = {
        id,
        merchantId: request.merchantId,
        environment: request.environment,
        kind: request.kind,
        scopes,
        keyHash,
        keyPrefix: ApiKey.displayPrefix(key)
      }
      yield* audit.recording(store.insert(row, now), () =>
        change(
          request,
          "api_key.create",
          { type: "api_key", id },
          {
            kind: request.kind,
            scopes: scopes.join(" "),
            prefix: row.keyPrefix
          }
        )
      )
      return { id, key, environment: request.environment, kind: request.kind, scopes } satisfies IssuedKey
    })

    /** What a presented key is: its principal, revoked, or unknown (malformed ones too). */
    const identify = Telemetry.fn("ApiKeys.identify")(function* (key: string) {
      // Text shaped like no key costs no hashing and no lookup.
      if (parseKeyPrefix(key) === undefined) return ApiKey.verdictOf(key, "", undefined)
      const digested = yield* digest(key)
      let found = yield* store.findByHash(digested)
      if (found === undefined) {
        // Stored before keys were hashed keyed: found by its plain hash once, then hashed keyed.
        const plain = yield* crypto.sha256(key)
        const old = yield* store.findByHash(plain)
        if (old !== undefined && constantTimeEqual(old.keyHash, plain)) {
          yield* store.upgradeHash(old.id, plain, digested)
          found = { ...old, keyHash: digested }
        }
      }
      return ApiKey.verdictOf(key, digested, found)
    })

    /** The principal of a presented key; `undefined` for an unknown, revoked or malformed one. */
    const authenticate = (key: string) =>
      Effect.map(identify(key), (v): Principal | undefined => (v._tag === "Valid" ? v.principal : undefined))

    const list = Telemetry.fn("ApiKeys.list")((merchantId: MerchantId) => store.list(merchantId))

    /** `false` when the merchant has no such key or it was already revoked. */
    const revoke = Telemetry.fn("ApiKeys.revoke")(function* (merchantId: MerchantId, keyId: string) {
      const now = yield* DateTime.now
      return yield* audit.recording(store.revoke(merchantId, keyId, now), (revoked) =>
        revoked
          ? {
              merchantId,
              environment: null,
              action: "api_key.revoke",
              resourceType: "api_key",
              resourceId: keyId
            }
          : undefined
      )
    })

    return { digest, issue, identify, authenticate, list, revoke }
  })
}) {}
