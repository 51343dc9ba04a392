/**
 * The OAuth clients service: creates a merchant's clients (the secret shown once), lists and revokes
 * them, authenticates a client's credentials, issues access tokens and resolves one to its grant. Hashes
 * are `ApiKeys.digest`'s, compared in constant time.
 */
import { Audit, change } from "../audit/Audit.js"
import { DateTime, Effect } from "effect"
import { ApiKeys } from "./ApiKeys.js"
import type { Scope } from "../kernel/Auth.js"
import { Crypto, constantTimeEqual, hex } from "../kernel/Crypto.js"
import type { Environment, MerchantId } from "../kernel/Ids.js"
import * as OAuthClient from "./OAuthClient.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { OAuthClientsStore } from "./OAuthClientsStore.js"

export interface CreateRequest {
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly scopes: ReadonlyArray<Scope>
  readonly name: string | null
}

export class OAuthClients extends Effect.Service<OAuthClients>()("laari/OAuthClients", {
  effect: Effect.gen(function* () {
    const store = yield* OAuthClientsStore
    const crypto = yield* Crypto
    const keys = yield* ApiKeys
    const audit = yield* Audit
    const random = (n: number) => Effect.map(crypto.bytes(n), hex)

    /** A new client; its secret is returned here only. */
    const create = Telemetry.fn("OAuthClients.create")(function* (request: CreateRequest) {
      const secret = OAuthClient.clientSecretOf(request.environment, yield* random(OAuthClient.SecretBytes))
      const client: OAuthClient.Client = {
        id: yield* crypto.uuid,
        clientId: OAuthClient.clientIdOf(request.environment, yield* random(OAuthClient.ClientIdBytes)),
        merchantId: request.merchantId,
        environment: request.environment,
        name: request.name,
        scopes: request.scopes,
        secretHash: yield* keys.digest(secret),
        createdAt: yield* DateTime.now,
        revokedAt: null
      }
      yield* audit.recording(store.insertClient(client), () =>
        change(
          request,
          "oauth_client.create",
          { type: "oauth_client", id: client.id },
          {
            client_id: client.clientId,
            name: client.name,
            scopes: client.scopes.join(" ")
          }
        )
      )
      return { client, secret }
    })

    /** Revokes the client and every token it holds; `undefined` when the merchant has no such client. */
    // The merchant's id as a request names it: one that is no merchant's finds nothing.
    const revoke = Telemetry.fn("OAuthClients.revoke")(function* (merchantId: string, clientId: string) {
      const now = yield* DateTime.now
      return yield* audit.recording(store.revokeClient(merchantId as MerchantId, clientId, now), (revoked) =>
        revoked === undefined
          ? undefined
          : {
              merchantId,
              environment: null,
              action: "oauth_client.revoke",
              resourceType: "oauth_client",
              resourceId: clientId
            }
      )
    })

    /** The client these credentials authenticate: known, not revoked, the secret right (constant time). */
    const authenticate = Telemetry.fn("OAuthClients.authenticate")(function* (
      clientId: string,
      secret: string
    ) {
      const client = yield* store.findClient(clientId)
      // The hash is computed whether or not the client exists, so timing tells nothing either way.
      const digest = yield* keys.digest(secret)
      if (client === undefined || client.revokedAt !== null) return undefined
      return constantTimeEqual(client.secretHash, digest) ? client : undefined
    })

    /** A new access token for `client` with `scopes`, for `OAuthClient.TokenLifetimeSeconds`. */
    const issue = Telemetry.fn("OAuthClients.issue")(function* (
      client: OAuthClient.Client,
      scopes: ReadonlyArray<Scope>
    ) {
      const token = OAuthClient.accessTokenOf(client.environment, yield* random(OAuthClient.SecretBytes))
      const now = yield* DateTime.now
      const expiresAt = DateTime.add(now, { seconds: OAuthClient.TokenLifetimeSeconds })
      yield* store.insertToken({
        id: yield* crypto.uuid,
        client: client.id,
        tokenHash: yield* keys.digest(token),
        scopes,
        expiresAt,
        revokedAt: null,
        createdAt: now
      })
      return { token, expiresAt }
    })

    /** The grant of a token that is known, unexpired and unrevoked, its client unrevoked too. */
    const grantOf = Telemetry.fn("OAuthClients.grantOf")(function* (token: string) {
      const digest = yield* keys.digest(token)
      const found = yield* store.findToken(digest)
      return OAuthClient.grantOf(found, digest, yield* DateTime.now)
    })

    /** Revokes `token` if `client` holds it (RFC 7009: anything else is ignored). */
    const revokeToken = Telemetry.fn("OAuthClients.revokeToken")(function* (
      client: OAuthClient.Client,
      token: string
    ) {
      yield* store.revokeToken(client.id, yield* keys.digest(token), yield* DateTime.now)
    })

    return {
      create,
      /** The merchant's clients, oldest first, revoked ones too. */
      list: Telemetry.fn("OAuthClients.list")((merchantId: string) =>
        store.listClients(merchantId as MerchantId)
      ),
      revoke,
      authenticate,
      issue,
      grantOf,
      revokeToken
    }
  }),
  dependencies: [ApiKeys.Default]
}) {}
