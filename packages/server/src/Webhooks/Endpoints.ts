/**
 * What a merchant does to its webhook endpoints, once for the API and the dashboard: core's
 * `WebhookEndpoints` (registering, changing, deleting, rotating the secret) with the server's URL rules
 * before it and its master keys sealing the secrets (`Sealer.layer`, the `SecretSealer`). Each fails with
 * the domain's errors (not found, invalid URL). The delivery log is core's `Deliveries`.
 */
import { Auth, Errors, SecretSealer, WebhookEndpoint, WebhookEndpoints } from "@laari/core"
import { Context, type Duration, Effect, Layer } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Address from "./Address.js"
import * as Replay from "./Replay.js"

const make = Effect.gen(function* () {
  const endpoints = yield* WebhookEndpoints.WebhookEndpoints
  const config = yield* ServerConfigTag
  const sealing = Effect.provideService(SecretSealer.SecretSealer, yield* SecretSealer.SecretSealer)
  const policy: Address.Policy = { allowPrivate: config.webhookAllowPrivate }

  const checkUrl = (url: string | undefined) => {
    const refusal = url === undefined ? undefined : Address.refuseUrl(url, policy)
    return refusal === undefined ? Effect.void : Effect.fail(Errors.InvalidRequest.field("url", refusal))
  }

  return {
    list: (principal: Auth.Principal, page: { readonly limit: number; readonly offset: number }) =>
      endpoints.list(Auth.tenantOf(principal), page),

    /** The operator's view: a merchant's endpoints in both environments. */
    ofMerchant: (merchantId: string, page: { readonly limit: number; readonly offset: number }) =>
      endpoints.list({ merchantId }, page),

    get: (principal: Auth.Principal, id: string) => endpoints.get(Auth.tenantOf(principal), id),

    /** A new endpoint and its secret, which is shown this once; refused past `Webhook.MaxEndpoints`. */
    create: (principal: Auth.Principal, input: WebhookEndpoints.CreateRequest) =>
      Effect.zipRight(checkUrl(input.url), sealing(endpoints.create(Auth.tenantOf(principal), input))),

    update: (principal: Auth.Principal, id: string, changes: WebhookEndpoint.EndpointChanges) =>
      Effect.zipRight(checkUrl(changes.url), endpoints.update(Auth.tenantOf(principal), id, changes)),

    remove: (principal: Auth.Principal, id: string) => endpoints.remove(Auth.tenantOf(principal), id),

    /** A new secret; the previous one keeps signing for `overlap` (24 h by default). */
    rotate: (principal: Auth.Principal, id: string, overlap?: Duration.Duration) =>
      sealing(endpoints.rotate(Auth.tenantOf(principal), id, overlap)),

    /**
     * How the idempotency table keeps a response showing one of the merchant's secrets: without it
     * (`Replay`). `idOf` names the endpoint from the response or the request.
     */
    concealed: (principal: Auth.Principal, idOf: (body: Record<string, unknown>) => unknown) =>
      Replay.concealed(idOf, (id) => sealing(endpoints.secrets(Auth.tenantOf(principal), id)))
  }
})

export class Endpoints extends Context.Tag("laari/server/WebhookEndpoints")<
  Endpoints,
  Effect.Effect.Success<typeof make>
>() {}

/**
 * Over core's service, from the same layer value `Engine.layer` uses: built in one graph with it, the two
 * are one (layers are memoized by reference); it holds no state, so a separate build changes nothing.
 */
export const layer = Layer.effect(Endpoints, make).pipe(
  Layer.provide(WebhookEndpoints.WebhookEndpoints.Default)
)
