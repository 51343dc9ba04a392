/**
 * The memory adapter of core's webhook endpoints store. Secrets are kept as the sealer gave them (the
 * testkit's is `SecretSealer.plainSealer`: nothing here is at rest). Deleted endpoints stay, marked,
 * and what they still had to send is failed.
 */
import { Ids, type Store, Webhook, type WebhookEndpoint } from "@laari/core"
import { Effect, HashMap, Option } from "effect"
import type { MemoryDbService, StoredEndpoint, Tables } from "./MemoryDb.js"
import { failPending } from "./MemoryDeliveries.js"
import { insertRow } from "./MemoryRows.js"

const owns = (owner: WebhookEndpoint.Owner, e: StoredEndpoint) =>
  e.merchantId === owner.merchantId &&
  (owner.environment === undefined || e.environment === owner.environment)

/** The owner's endpoint `id` names (in any case), not deleted. */
const stored = (t: Tables, owner: WebhookEndpoint.Owner, id: string): StoredEndpoint | undefined => {
  if (!Ids.isUuid(id)) return undefined
  const e = Option.getOrUndefined(HashMap.get(t.webhookEndpoints, id.toLowerCase()))?.value
  return e !== undefined && e.deletedAt === null && owns(owner, e) ? e : undefined
}

const endpointOf = ({
  secret: _s,
  previousSecret: _p,
  previousSecretExpiresAt: _x,
  deletedAt: _d,
  ...endpoint
}: StoredEndpoint): Webhook.Endpoint => endpoint

const replace = (t: Tables, e: StoredEndpoint): Tables => {
  const row = Option.getOrThrow(HashMap.get(t.webhookEndpoints, e.id))
  return { ...t, webhookEndpoints: HashMap.set(t.webhookEndpoints, e.id, { ...row, value: e }) }
}

export const webhookEndpoints = (db: MemoryDbService): Store.WebhookEndpointsStoreService => ({
  create: (tenant, input, now, max) =>
    db.modify((t) => {
      const count = Array.from(HashMap.values(t.webhookEndpoints)).filter(
        (r) => r.value.deletedAt === null && owns(tenant, r.value)
      ).length
      if (count >= max) return [undefined, t]
      const e: StoredEndpoint = {
        id: input.id.toLowerCase(),
        merchantId: tenant.merchantId,
        environment: tenant.environment,
        url: input.url,
        enabledEvents: [...input.enabledEvents],
        description: input.description,
        status: "ENABLED",
        statusReason: null,
        failingSince: null,
        createdAt: now,
        secret: input.secret,
        previousSecret: null,
        previousSecretExpiresAt: null,
        deletedAt: null
      }
      return [endpointOf(e), insertRow(t, "webhookEndpoints", e.id, e)]
    }),
  find: (owner, id) =>
    Effect.map(db.get, (t) => {
      const e = stored(t, owner, id)
      return e === undefined ? undefined : endpointOf(e)
    }),
  sealedSecrets: (owner, id) =>
    Effect.map(db.get, (t) => {
      const e = stored(t, owner, id)
      return e === undefined
        ? undefined
        : {
            secret: e.secret,
            previousSecret: e.previousSecret,
            previousSecretExpiresAt: e.previousSecretExpiresAt
          }
    }),
  // In the order registered, newest first, as the SQL store's `position`.
  list: (owner, page) =>
    Effect.map(db.get, (t) =>
      Array.from(HashMap.values(t.webhookEndpoints))
        .filter((r) => r.value.deletedAt === null && owns(owner, r.value))
        .sort((a, b) => b.seq - a.seq)
        .slice(page.offset, page.offset + page.limit)
        .map((r) => endpointOf(r.value))
    ),
  update: (owner, id, changes) =>
    db.modify((t) => {
      const e = stored(t, owner, id)
      if (e === undefined) return [undefined, t]
      const status =
        changes.status === "ENABLED"
          ? { status: "ENABLED" as const, statusReason: null, failingSince: null }
          : changes.status === "DISABLED"
            ? {
                status: "DISABLED" as const,
                statusReason: e.status === "DISABLED" ? e.statusReason : Webhook.DisabledByMerchant
              }
            : {}
      const changed: StoredEndpoint = {
        ...e,
        ...(changes.url === undefined ? {} : { url: changes.url }),
        ...(changes.enabledEvents === undefined ? {} : { enabledEvents: [...changes.enabledEvents] }),
        ...(changes.description === undefined ? {} : { description: changes.description }),
        ...status
      }
      return [endpointOf(changed), replace(t, changed)]
    }),
  remove: (owner, id, now) =>
    db.modify((t) => {
      const e = stored(t, owner, id)
      return e === undefined
        ? [undefined, t]
        : [endpointOf(e), failPending(replace(t, { ...e, deletedAt: now, status: "DISABLED" }), e.id, now)]
    }),
  rotate: (owner, id, secret, previousExpiresAt) =>
    db.modify((t) => {
      const e = stored(t, owner, id)
      return e === undefined
        ? [false, t]
        : [
            true,
            replace(t, { ...e, previousSecret: e.secret, previousSecretExpiresAt: previousExpiresAt, secret })
          ]
    })
})
