/** The memory adapter of core's OAuth clients store: clients and their access tokens, by hash. */
import { Store } from "@laari/core"
import { Effect, HashMap, Option } from "effect"
import type { MemoryDbService, Tables } from "./MemoryDb.js"
import { insertRow, newestFirst } from "./MemoryRows.js"

const clientByClientId = (t: Tables, clientId: string) =>
  Array.from(HashMap.values(t.oauthClients)).find((r) => r.value.clientId === clientId)?.value

export const oauthClients = (db: MemoryDbService): Store.OAuthClientsStoreService => ({
  insertClient: (client) =>
    db.update((t) => insertRow(t, "oauthClients", client.id, { ...client, scopes: [...client.scopes] })),
  listClients: (merchantId) =>
    Effect.map(db.get, (t) =>
      // Oldest first, as `newestFirst` orders the other way.
      newestFirst(
        Array.from(HashMap.values(t.oauthClients)).filter((r) => r.value.merchantId === merchantId)
      ).reverse()
    ),
  findClient: (clientId) => Effect.map(db.get, (t) => clientByClientId(t, clientId)),
  revokeClient: (merchantId, clientId, now) =>
    db.modify((t) => {
      const client = clientByClientId(t, clientId)
      if (client === undefined || client.merchantId !== merchantId) return [undefined, t]
      const revoked = { ...client, revokedAt: client.revokedAt ?? now }
      const row = Option.getOrThrow(HashMap.get(t.oauthClients, client.id))
      const tokens = HashMap.map(t.oauthTokens, (token) =>
        token.client === client.id && token.revokedAt === null ? { ...token, revokedAt: now } : token
      )
      return [
        revoked,
        {
          ...t,
          oauthClients: HashMap.set(t.oauthClients, client.id, { ...row, value: revoked }),
          oauthTokens: tokens
        }
      ]
    }),
  insertToken: (token) =>
    db.update((t) => ({
      ...t,
      oauthTokens: HashMap.set(t.oauthTokens, token.id, { ...token, scopes: [...token.scopes] })
    })),
  findToken: (tokenHash) =>
    Effect.map(db.get, (t) => {
      const token = Array.from(HashMap.values(t.oauthTokens)).find((k) => k.tokenHash === tokenHash)
      const client = token && Option.getOrUndefined(HashMap.get(t.oauthClients, token.client))?.value
      return token === undefined || client === undefined ? undefined : { token, client }
    }),
  revokeToken: (client, tokenHash, now) =>
    db.update((t) => {
      const token = Array.from(HashMap.values(t.oauthTokens)).find(
        (k) => k.tokenHash === tokenHash && k.client === client && k.revokedAt === null
      )
      return token === undefined
        ? t
        : { ...t, oauthTokens: HashMap.set(t.oauthTokens, token.id, { ...token, revokedAt: now }) }
    })
})
