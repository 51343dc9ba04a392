/**
 * OAuth clients and their access tokens (the client credentials grant): a client belongs to one
 * merchant and environment and carries the scopes its tokens may have. Secrets and tokens are kept as
 * keyed hashes, as API keys are (`ApiKeys.digest`). The model, the credentials' shapes, when a token
 * stands for a grant (`OAuthClientsStore` keeps them).
 */
import { DateTime } from "effect"
import type { Scope } from "../kernel/Auth.js"
import { constantTimeEqual } from "../kernel/Crypto.js"
import type { Environment, MerchantId } from "../kernel/Ids.js"

/** How long an access token lives: an hour, as is usual for client credentials. */
export const TokenLifetimeSeconds = 3_600

/** Random bytes in each credential: an id that is not secret, a secret, and an opaque access token. */
export const ClientIdBytes = 12
export const SecretBytes = 24

export const clientIdOf = (environment: Environment, hexBytes: string) => `lci_${environment}_${hexBytes}`
export const clientSecretOf = (environment: Environment, hexBytes: string) => `lcs_${environment}_${hexBytes}`
export const accessTokenOf = (environment: Environment, hexBytes: string) => `lat_${environment}_${hexBytes}`

/** Whether `text` has the shape of an access token (`lat_test_` and a secret's hex digits), and its environment. */
export const accessTokenEnvironment = (text: string): Environment | undefined => {
  const m = /^lat_(test|live)_([0-9a-f]+)$/.exec(text)
  return m === null || m[2]!.length !== SecretBytes * 2 ? undefined : (m[1] as Environment)
}

export interface Client {
  readonly id: string
  readonly clientId: string
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly name: string | null
  readonly scopes: ReadonlyArray<Scope>
  readonly secretHash: string
  readonly createdAt: DateTime.Utc
  readonly revokedAt: DateTime.Utc | null
}

export interface Token {
  readonly id: string
  /** The client's `id` (not its `clientId`). */
  readonly client: string
  readonly tokenHash: string
  readonly scopes: ReadonlyArray<Scope>
  readonly expiresAt: DateTime.Utc
  readonly revokedAt: DateTime.Utc | null
  readonly createdAt: DateTime.Utc
}

/** What a valid access token stands for. */
export interface TokenGrant {
  readonly tokenId: string
  readonly client: Client
  readonly scopes: ReadonlyArray<Scope>
  readonly expiresAt: DateTime.Utc
}

/**
 * The grant of a token found by its hash `digest`: none unless the hashes match, neither the token nor
 * its client is revoked, and the token has not expired at `now`.
 */
export const grantOf = (
  found: { readonly token: Token; readonly client: Client } | undefined,
  digest: string,
  now: DateTime.Utc
): TokenGrant | undefined =>
  found === undefined ||
  !constantTimeEqual(found.token.tokenHash, digest) ||
  found.token.revokedAt !== null ||
  found.client.revokedAt !== null ||
  !DateTime.lessThan(now, found.token.expiresAt)
    ? undefined
    : {
        tokenId: found.token.id,
        client: found.client,
        scopes: found.token.scopes,
        expiresAt: found.token.expiresAt
      }
