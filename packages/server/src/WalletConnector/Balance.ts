/**
 * The merchant's balance where its money lives in the wallet provider's core: read from laari's own
 * movements (`Sql/ConnectorBalance.ts`), since the built-in ledger holds none of it there; the other
 * environments' from the built-in ledger, as before.
 */
import { type Ids, Store } from "@laari/core"
import { Effect, Layer } from "effect"
import * as ConnectorBalance from "../Sql/ConnectorBalance.js"
import type { WalletConnectorConfig } from "./Config.js"

/** The balance reads of the environments whose money lives in the core from movements; the rest as before. */
export const layer = (config: WalletConnectorConfig) =>
  Layer.effect(
    Store.LedgerReadsStore,
    Effect.gen(function* () {
      const builtIn = yield* Store.LedgerReadsStore
      const away = yield* ConnectorBalance.make
      const of = (tenant: Ids.Tenant) => (config.environments.includes(tenant.environment) ? away : builtIn)
      return {
        available: (tenant) => of(tenant).available(tenant),
        movements: (tenant, cursor) => of(tenant).movements(tenant, cursor),
        between: (tenant, from, to) => of(tenant).between(tenant, from, to),
        // The wallet app's list is the built-in ledger's: a customer of the core pays in the provider's app.
        payments: builtIn.payments
      } satisfies Store.LedgerReadsStoreService
    })
  )
