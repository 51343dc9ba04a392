/**
 * The webhook endpoints service: a merchant's endpoints registered (the secret shown once, at most
 * `Webhook.MaxEndpoints` in each environment), read, changed, deleted, and their secrets rotated. Secrets
 * go through the host's `SecretSealer`, which each call that handles one asks for, so a host provides it
 * where it has the key. The host checks URLs before (`WebhookEndpoint`: its network's rules).
 */
import { DateTime, Duration, Effect, Encoding } from "effect"
import { Audit } from "../audit/Audit.js"
import { Crypto } from "../kernel/Crypto.js"
import { Transactor } from "../kernel/Transactor.js"
import type { Tenant } from "../kernel/Ids.js"
import * as Webhook from "./Webhook.js"
import * as WebhookEndpoint from "./WebhookEndpoint.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { SecretSealer } from "./SecretSealer.js"
import { WebhookEndpointsStore } from "./WebhookEndpointsStore.js"

export interface CreateRequest {
  readonly url: string
  readonly enabledEvents: ReadonlyArray<string>
  readonly description: string | null
}

export class WebhookEndpoints extends Effect.Service<WebhookEndpoints>()("laari/WebhookEndpoints", {
  effect: Effect.gen(function* () {
    const store = yield* WebhookEndpointsStore
    const crypto = yield* Crypto
    const tx = yield* Transactor
    const audit = yield* Audit
    /** Records a change to endpoint `id` of `owner`; with it, in one transaction. */
    const noted = <A, E, R>(
      owner: WebhookEndpoint.Owner,
      action: string,
      id: string,
      fields: Readonly<Record<string, unknown>>,
      effect: Effect.Effect<A, E, R>
    ) =>
      tx.withTransaction(
        Effect.tap(effect, () =>
          audit.note({
            merchantId: owner.merchantId,
            environment: owner.environment ?? null,
            action,
            resourceType: "webhook_endpoint",
            resourceId: id,
            fields
          })
        )
      )
    const newSecret = Effect.map(
      crypto.bytes(WebhookEndpoint.SecretBytes),
      (bytes) => `${WebhookEndpoint.SecretPrefix}${Encoding.encodeBase64(bytes)}`
    )
    const found = <A>(a: A | undefined) =>
      a === undefined ? Effect.fail(new Webhook.WebhookEndpointNotFound()) : Effect.succeed(a)

    /** A new endpoint and its secret, which is shown this once; refused past `Webhook.MaxEndpoints`. */
    const create = Telemetry.fn("WebhookEndpoints.create")(function* (
      tenant: Tenant,
      request: CreateRequest
    ) {
      const sealer = yield* SecretSealer
      const id = yield* crypto.uuid
      const secret = yield* newSecret
      const sealed = yield* sealer.seal(id, secret)
      const now = yield* DateTime.now
      const endpoint = yield* noted(
        tenant,
        "webhook_endpoint.create",
        id,
        { ...request },
        Effect.flatMap(
          store.create(tenant, { id, ...request, secret: sealed }, now, Webhook.MaxEndpoints),
          (made) =>
            made === undefined ? Effect.fail(new Webhook.EndpointLimitReached()) : Effect.succeed(made)
        )
      )
      return { endpoint, secret }
    })

    const get = Telemetry.fn("WebhookEndpoints.get")(function* (owner: WebhookEndpoint.Owner, id: string) {
      return yield* found(yield* store.find(owner, id))
    })

    const update = Telemetry.fn("WebhookEndpoints.update")(function* (
      owner: WebhookEndpoint.Owner,
      id: string,
      changes: WebhookEndpoint.EndpointChanges
    ) {
      return yield* noted(
        owner,
        "webhook_endpoint.update",
        id,
        { ...changes },
        Effect.flatMap(store.update(owner, id, changes), found)
      )
    })

    /** Deletes the endpoint; the endpoint as it was. */
    const remove = Telemetry.fn("WebhookEndpoints.remove")(function* (
      owner: WebhookEndpoint.Owner,
      id: string
    ) {
      const now = yield* DateTime.now
      return yield* noted(
        owner,
        "webhook_endpoint.delete",
        id,
        {},
        Effect.flatMap(store.remove(owner, id, now), found)
      )
    })

    /** A new secret; the previous one keeps signing for `overlap` (24 h by default). */
    const rotate = Telemetry.fn("WebhookEndpoints.rotate")(function* (
      owner: WebhookEndpoint.Owner,
      id: string,
      overlap: Duration.Duration = Webhook.DefaultRotationOverlap
    ) {
      const sealer = yield* SecretSealer
      const expires = DateTime.addDuration(yield* DateTime.now, overlap)
      const secret = yield* newSecret
      const sealed = yield* sealer.seal(id, secret)
      yield* noted(
        owner,
        "webhook_endpoint.rotate_secret",
        id,
        { previous_secret_expires_at: DateTime.formatIso(expires) },
        Effect.flatMap(store.rotate(owner, id, sealed, expires), (rotated) => found(rotated || undefined))
      )
      return { secret, previousSecretExpiresAt: expires }
    })

    /** The endpoint's secrets, opened (for signing, or putting one back in a replayed response). */
    const secrets = Telemetry.fn("WebhookEndpoints.secrets")(function* (
      owner: WebhookEndpoint.Owner,
      id: string
    ) {
      const sealer = yield* SecretSealer
      const sealed = yield* store.sealedSecrets(owner, id)
      if (sealed === undefined) return undefined
      return {
        secret: yield* sealer.open(id, sealed.secret),
        previousSecret: sealed.previousSecret === null ? null : yield* sealer.open(id, sealed.previousSecret),
        previousSecretExpiresAt: sealed.previousSecretExpiresAt
      } satisfies Webhook.Secrets
    })

    return {
      create,
      /** Newest first, deleted ones left out. */
      list: (owner: WebhookEndpoint.Owner, page: { readonly limit: number; readonly offset: number }) =>
        store.list(owner, page),
      get,
      update,
      remove,
      rotate,
      secrets
    }
  })
}) {}
