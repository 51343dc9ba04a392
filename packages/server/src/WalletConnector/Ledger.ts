/**
 * Core's `RemoteLedger` port over the wallet connector client: each movement as the protocol's transfer,
 * each answer in the port's words, every call counted by the circuit breaker. A customer's wallet in the
 * core is the one found by phone (`customers.wallet_id`), else the wallet named by laari's customer id (the
 * sandbox payers a provider seeds); a merchant's is named by the merchant's id; fees go to
 * `LAARI_WALLET_FEE_WALLET`.
 */
import { Connector, Crypto, Errors, type Ids, type Movement, RemoteLedger, Store, Wallet } from "@laari/core"
import { Context, DateTime, Duration, Effect, Layer, Option } from "effect"
import * as MovementBalance from "./Balance.js"
import * as Breaker from "./Breaker.js"
import * as Client from "./Client.js"
import { type WalletConnectorConfig, clientConfig } from "./Config.js"
import * as ConnectorCustomers from "../Sql/ConnectorCustomers.js"
import * as Movements from "../Sql/Movements.js"

/** The database its adapters under `Sql/` read and write. */
type Database =
  | Effect.Effect.Context<typeof ConnectorCustomers.make>
  | Layer.Layer.Context<typeof Movements.movementsLayer>

/** How long a payer's wallet, as the core answered, is used again without asking. */
const PayerTtlMs = 30_000

/** The breaker, for `/readyz` and the metrics. */
export class ConnectorState extends Context.Tag("laari/WalletConnector/State")<
  ConnectorState,
  { readonly breaker: Breaker.Breaker; readonly url: string }
>() {}

const at = (text: string | null): DateTime.Utc | null =>
  text === null ? null : DateTime.unsafeMake(new Date(text))

const toAnswer = (
  outcome: Client.Posted | Client.Refused | Client.Cancelled | Client.Unknown
): Movement.Answer => {
  switch (outcome._tag) {
    case "Posted":
      return { _tag: "posted", postedAt: at(outcome.postedAt) }
    case "Refused":
      return {
        _tag: "refused",
        reason: outcome.reason === null ? null : Connector.toWalletRefusal[outcome.reason]
      }
    case "Cancelled":
      return { _tag: "cancelled" }
    case "Unknown":
      return { _tag: "unknown", cause: outcome.message }
  }
}

/** The protocol's body of a movement; the memo cut to the protocol's length, the same every time. */
export const transferRequest = (m: Movement.Movement): Connector.TransferRequest => ({
  id: m.id,
  environment: m.environment,
  from: m.from,
  to: m.to,
  amount: m.amount,
  fee: m.feeTo === null ? null : { to: m.feeTo, amount: m.fee },
  memo: m.memo.slice(0, Connector.MaxMemoLength),
  kind: m.kind
})

export const layer = (
  config: WalletConnectorConfig
): Layer.Layer<RemoteLedger.RemoteLedger | ConnectorState, never, Client.WalletConnectorClient | Database> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const client = yield* Client.WalletConnectorClient
      const customers = yield* ConnectorCustomers.make
      const breaker = yield* Breaker.make()
      const payers = new Map<string, { readonly payer: RemoteLedger.RemotePayer; readonly until: number }>()

      const counted = <A extends { readonly _tag: string }>(call: Effect.Effect<A>) =>
        Effect.tap(call, (a) => breaker.record(a._tag !== "Unknown"))

      const walletIdOf = (customerId: Ids.CustomerId) =>
        customers
          .walletIdOf(customerId)
          .pipe(Effect.mapError((cause) => new Errors.ServiceUnavailable({ cause })))

      const ledger: RemoteLedger.RemoteLedgerService = {
        handles: (environment) => config.environments.includes(environment),
        accepting: breaker.accepting,
        send: (m) =>
          client.transfer(transferRequest(m)).pipe(
            // `409`: this id went out before with another body, which laari never sends: its bug, logged,
            // and the outcome left to the resolver's question, which the core answers for the first body.
            Effect.catchTag("TransferConflict", (e) =>
              Effect.as(
                Effect.logError(e.message),
                new Client.Unknown({ cause: e.message, requestId: e.requestId })
              )
            ),
            counted,
            Effect.map(toAnswer)
          ),
        status: (id) =>
          counted(client.status(id)).pipe(
            Effect.map((o) => (o._tag === "NotTaken" ? ({ _tag: "not-taken" } as const) : toAnswer(o)))
          ),
        cancel: (id) => Effect.map(counted(client.cancel(id)), toAnswer),
        payer: (customer) =>
          Effect.gen(function* () {
            const cached = payers.get(customer.id)
            if (cached !== undefined && cached.until > Date.now()) return cached.payer
            const walletId = yield* walletIdOf(customer.id)
            const asked = yield* Effect.either(
              client.wallet(walletId).pipe(
                Effect.tapBoth({
                  onFailure: () => breaker.record(false),
                  onSuccess: () => breaker.record(true)
                })
              )
            )
            if (asked._tag === "Left") {
              // The zone a holder's months count in, as last told, serves while the core is away: a cap
              // is then still decided (and a charge committed pending), not refused for want of it.
              if (cached !== undefined) return cached.payer
              return yield* new Errors.ServiceUnavailable({
                message: Errors.walletUnavailable().message,
                cause: asked.left
              })
            }
            const found = asked.right
            if (Option.isNone(found)) return undefined
            const payer = { walletId, timeZone: found.value.time_zone }
            payers.set(customer.id, { payer, until: Date.now() + PayerTtlMs })
            return payer
          }),
        merchantWallet: (merchantId) => merchantId,
        feeWallet: config.feeWallet,
        cancelAfter: Duration.seconds(config.cancelAfterS)
      }
      return Context.make(RemoteLedger.RemoteLedger, ledger).pipe(
        Context.add(ConnectorState, { breaker, url: config.url })
      )
    })
  )

/**
 * Customers found in the core: a phone laari does not know, in an environment whose money lives in the
 * core, is looked up there (`GET /wallets?phone=`) and, found, becomes laari's customer linked to that
 * wallet (`customers.wallet_id`), as an approval or a checkout payment needs one. A phone laari knows is
 * its customer, as ever; one the core has not either is no customer.
 */
const customersLayer = (config: WalletConnectorConfig) =>
  Layer.effect(
    Store.CustomersStore,
    Effect.gen(function* () {
      const local = yield* Store.CustomersStore
      const client = yield* Client.WalletConnectorClient
      const customers = yield* ConnectorCustomers.make
      const crypto = yield* Crypto.Crypto
      const link = (environment: Ids.Environment, wallet: Connector.Wallet) =>
        Effect.gen(function* () {
          const id = yield* crypto.uuid
          yield* customers.link(id, environment, wallet.phone, wallet.id)
          return yield* local.findByPhone(environment, wallet.phone)
        }).pipe(Effect.mapError((cause) => new Errors.ServiceUnavailable({ cause })))
      return {
        ...local,
        findByPhone: (environment, phone) =>
          Effect.gen(function* () {
            const known = yield* local.findByPhone(environment, phone)
            if (
              known !== undefined ||
              !config.environments.includes(environment) ||
              !/^\+960\d{7}$/.test(phone)
            )
              return known
            const found = yield* client
              .walletByPhone(phone)
              .pipe(
                Effect.mapError(
                  (e) =>
                    new Errors.ServiceUnavailable({ message: Errors.walletUnavailable().message, cause: e })
                )
              )
            return Option.isNone(found) ? undefined : yield* link(environment, found.value)
          })
      } satisfies Store.CustomersStoreService
    })
  )

/**
 * The built-in ledger, kept out of the environments whose money lives in the core: a payment there that
 * is not yet routed through the connector (QR codes, checkout, renewals, refunds) is refused whole, with
 * a `503` saying so, rather than moving money in a ledger that is not the provider's. Mandate charges
 * never reach it there: they go through the core.
 */
const walletLayer = (config: WalletConnectorConfig) =>
  Layer.effect(
    Wallet.Wallet,
    Effect.map(Wallet.Wallet, (builtIn): Wallet.WalletService => {
      const refused = (environment: Ids.Environment) =>
        new Errors.ServiceUnavailable({
          message: `This kind of payment is not yet taken through the wallet provider's core, which holds this service's ${environment} money; nothing was charged`
        })
      return {
        ...builtIn,
        transfer: (t) =>
          config.environments.includes(t.environment)
            ? Effect.fail(refused(t.environment))
            : builtIn.transfer(t),
        reverse: (r) =>
          config.environments.includes(r.environment)
            ? Effect.fail(refused(r.environment))
            : builtIn.reverse(r)
      }
    })
  )

/**
 * The movements' store, the port and the breaker's state when a connector is configured; nothing
 * otherwise, and core moves every environment's money in the built-in ledger.
 */
export const connectorLayer = (
  config: WalletConnectorConfig | undefined
): Layer.Layer<
  never,
  never,
  Database | Store.CustomersStore | Crypto.Crypto | Wallet.Wallet | Store.LedgerReadsStore
> =>
  // Provided by tag only: core asks for them with `serviceOption`, which needs nothing in the types.
  config === undefined
    ? Layer.empty
    : Layer.mergeAll(
        layer(config),
        customersLayer(config),
        walletLayer(config),
        MovementBalance.layer(config)
      ).pipe(Layer.provide(Client.live(clientConfig(config))), Layer.provideMerge(Movements.movementsLayer))
