/**
 * OAuth clients and their tokens, kept as keyed hashes (`OAuthClients` issues and checks them).
 */
import { Context, type DateTime, type Effect } from "effect"
import type { Client, Token } from "./OAuthClient.js"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { MerchantId } from "../kernel/Ids.js"

export interface OAuthClientsStoreService {
  readonly insertClient: (client: Client) => Effect.Effect<void, ServiceUnavailable>
  /** The merchant's clients, oldest first, revoked ones too. */
  readonly listClients: (merchantId: MerchantId) => Effect.Effect<ReadonlyArray<Client>, ServiceUnavailable>
  /** By its `clientId`, revoked or not. */
  readonly findClient: (clientId: string) => Effect.Effect<Client | undefined, ServiceUnavailable>
  /**
   * Revokes the merchant's client (`clientId`) unless it is already, and every token it holds, in one
   * transaction; the client as it is after, or `undefined` when the merchant has no such client.
   */
  readonly revokeClient: (
    merchantId: MerchantId,
    clientId: string,
    now: DateTime.Utc
  ) => Effect.Effect<Client | undefined, ServiceUnavailable>
  readonly insertToken: (token: Token) => Effect.Effect<void, ServiceUnavailable>
  /** The token with that hash and its client; never cached, so a revocation holds at once everywhere. */
  readonly findToken: (
    tokenHash: string
  ) => Effect.Effect<{ readonly token: Token; readonly client: Client } | undefined, ServiceUnavailable>
  /** Revokes the token with that hash if the client (`Client.id`) holds it and it is not yet revoked. */
  readonly revokeToken: (
    client: string,
    tokenHash: string,
    now: DateTime.Utc
  ) => Effect.Effect<void, ServiceUnavailable>
}
export class OAuthClientsStore extends Context.Tag("laari/Store/OAuthClients")<
  OAuthClientsStore,
  OAuthClientsStoreService
>() {}
