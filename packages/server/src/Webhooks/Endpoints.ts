/**
 * What a merchant does to its webhook endpoints, once for the API and the dashboard: the URL rules,
 * new secrets, rotation, resending. Each fails with the domain's errors (not found, invalid URL).
 */
import { Auth, Crypto, Errors, Webhook } from "@laari/core"
import { Context, DateTime, Duration, Effect, Layer } from "effect"
import { ServerConfigTag } from "../Config.js"
import * as Address from "./Address.js"
import * as Replay from "./Replay.js"
import * as Signing from "./Signing.js"
import type { EndpointChanges, Owner } from "./Records.js"
import { WebhookStore } from "./Sql.js"

const make = Effect.gen(function* () {
  const store = yield* WebhookStore
  const crypto = yield* Crypto.Crypto
  const config = yield* ServerConfigTag
  const policy: Address.Policy = { allowPrivate: config.webhookAllowPrivate }

  const checkUrl = (url: string | undefined) => {
    const refusal = url === undefined ? undefined : Address.refuseUrl(url, policy)
    return refusal === undefined ? Effect.void : Effect.fail(Errors.InvalidRequest.field("url", refusal))
  }

  const found = <A>(a: A | undefined) =>
    a === undefined ? Effect.fail(new Webhook.WebhookEndpointNotFound()) : Effect.succeed(a)

  return {
    list: (principal: Auth.Principal, page: { readonly limit: number; readonly offset: number }) =>
      store.list(Auth.tenantOf(principal), page),

    get: (principal: Auth.Principal, id: string) =>
      Effect.flatMap(store.find(Auth.tenantOf(principal), id), found),

    /** A new endpoint and its secret, which is shown this once; refused past `Webhook.MaxEndpoints`. */
    create: (
      principal: Auth.Principal,
      input: {
        readonly url: string
        readonly enabledEvents: ReadonlyArray<string>
        readonly description: string | null
      }
    ) =>
      Effect.gen(function* () {
        yield* checkUrl(input.url)
        const secret = Signing.generateSecret()
        const endpoint = yield* store.create(
          Auth.tenantOf(principal),
          { id: yield* crypto.uuid, ...input, secret },
          yield* DateTime.now,
          Webhook.MaxEndpoints
        )
        if (endpoint === undefined) return yield* new Webhook.EndpointLimitReached()
        return { endpoint, secret }
      }),

    update: (principal: Auth.Principal, id: string, changes: EndpointChanges) =>
      Effect.gen(function* () {
        yield* checkUrl(changes.url)
        return yield* found(yield* store.update(Auth.tenantOf(principal), id, changes))
      }),

    remove: (principal: Auth.Principal, id: string) =>
      Effect.flatMap(
        Effect.flatMap(DateTime.now, (now) => store.remove(Auth.tenantOf(principal), id, now)),
        found
      ),

    /** A new secret; the previous one keeps signing for `overlap` (24 h by default). */
    rotate: (
      principal: Auth.Principal,
      id: string,
      overlap: Duration.Duration = Webhook.DefaultRotationOverlap
    ) =>
      Effect.gen(function* () {
        const expires = DateTime.addDuration(yield* DateTime.now, overlap)
        const secret = Signing.generateSecret()
        yield* found((yield* store.rotate(Auth.tenantOf(principal), id, secret, expires)) || undefined)
        return { secret, previousSecretExpiresAt: expires }
      }),

    /**
     * How the idempotency table keeps a response showing one of the merchant's secrets: without it
     * (`Replay`). `idOf` names the endpoint from the response or the request.
     */
    concealed: (principal: Auth.Principal, idOf: (body: Record<string, unknown>) => unknown) =>
      Replay.concealed(idOf, (id) => store.secrets(Auth.tenantOf(principal), id)),

    /** An endpoint's log; `owner` is a merchant's environment, or (for the operator) the merchant. */
    deliveries: (owner: Owner, id: string, filter: Parameters<typeof store.deliveries>[1]) =>
      Effect.gen(function* () {
        const endpoint = yield* found(yield* store.find(owner, id))
        return yield* store.deliveries(endpoint.id, filter)
      }),

    /** One more attempt of one of the merchant's events to the endpoint. */
    resend: (principal: Auth.Principal, id: string, eventId: string) =>
      Effect.gen(function* () {
        const endpoint = yield* found(yield* store.find(Auth.tenantOf(principal), id))
        const attempt = yield* store.resend(endpoint, eventId, yield* crypto.uuid, yield* DateTime.now)
        return attempt ?? (yield* new Webhook.EventNotFound())
      })
  }
})

export class Endpoints extends Context.Tag("laari/server/WebhookEndpoints")<
  Endpoints,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Endpoints, make)
