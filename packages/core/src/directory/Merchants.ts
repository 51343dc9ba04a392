/**
 * The merchants service: creates a merchant with its sandbox payer, wallets and outlets in one unit,
 * finds and lists merchants, adds and lists outlets, and sets the feature gates.
 */
import { DateTime, Effect, Either } from "effect"
import { Audit } from "../audit/Audit.js"
import { Crypto, type CryptoService } from "../kernel/Crypto.js"
import { CustomerId, MerchantId } from "../kernel/Ids.js"
import * as Merchant from "./Merchant.js"
import { MerchantRegistryStore, type MerchantRegistryStoreService, MerchantsStore } from "./MerchantsStore.js"
import * as Telemetry from "../kernel/Telemetry.js"

/**
 * Creates a merchant over `store` (`Merchants.create`): the model decides it, the store keeps it in one
 * transaction. Exported for seeding, which runs where no engine is built.
 */
export const creating = (store: MerchantRegistryStoreService, crypto: CryptoService) =>
  Telemetry.fn("Merchants.create")(function* (input: Merchant.Input) {
    const id = MerchantId.make(yield* crypto.uuid)
    const payerId = CustomerId.make(yield* crypto.uuid)
    const opened = Merchant.open(input, id, payerId)
    if (Either.isLeft(opened)) return yield* opened.left
    const outlets = yield* store.create(
      { ...opened.right, outlets: input.outlets ?? [] },
      yield* DateTime.now
    )
    return { merchant: opened.right.merchant, outlets } satisfies Merchant.WithOutlets
  })

export class Merchants extends Effect.Service<Merchants>()("laari/Merchants", {
  effect: Effect.gen(function* () {
    const store = yield* MerchantRegistryStore
    const reads = yield* MerchantsStore
    const crypto = yield* Crypto
    const audit = yield* Audit
    const create = creating(store, crypto)
    /** A change to the merchant as a whole: in its chain, in no environment. */
    const merchantChange = (
      merchantId: string,
      action: string,
      resource: { type: string; id: string | null },
      fields?: Readonly<Record<string, unknown>>
    ) => ({
      merchantId,
      environment: null,
      action,
      resourceType: resource.type,
      resourceId: resource.id,
      fields
    })

    // Ids as a request names them: one that is no merchant's finds nothing.
    const addOutlet = Telemetry.fn("Merchants.addOutlet")(function* (merchantId: string, name: string) {
      const checked = Merchant.outletName(name)
      if (Either.isLeft(checked)) return yield* checked.left
      const now = yield* DateTime.now
      return yield* audit.recording(
        store.addOutlet(merchantId as MerchantId, checked.right, now),
        (outlet) =>
          outlet === undefined
            ? undefined
            : merchantChange(
                merchantId,
                "outlet.create",
                { type: "outlet", id: String(outlet.id) },
                { name: outlet.name }
              )
      )
    })

    const setFeatures = Telemetry.fn("Merchants.setFeatures")(function* (
      merchantId: string,
      patch: Merchant.FeaturesPatch
    ) {
      return yield* audit.recording(store.setFeatures(merchantId as MerchantId, patch), (merchant) =>
        merchant === undefined
          ? undefined
          : merchantChange(
              merchantId,
              "merchant.set_features",
              { type: "merchant", id: merchantId },
              { ...patch }
            )
      )
    })

    return {
      /** A merchant with its sandbox payer (a test customer holding `SandboxPayerBalance`), wallets and outlets. */
      create: (input: Merchant.Input) =>
        audit.recording(create(input), (made) =>
          merchantChange(
            made.merchant.id,
            "merchant.create",
            { type: "merchant", id: made.merchant.id },
            {
              name: made.merchant.name,
              city: made.merchant.city,
              mcc: made.merchant.mcc,
              outlets: made.outlets.length
            }
          )
        ),
      get: Telemetry.fn("Merchants.get")((merchantId: string) => reads.get(merchantId as MerchantId)),
      /** Merchants with their outlets, oldest first, at most `limit`. */
      list: Telemetry.fn("Merchants.list")((limit: number) => store.list(limit)),
      count: Effect.withSpan(store.count, "Merchants.count"),
      /** A new outlet; `undefined` when there is no such merchant. */
      addOutlet,
      listOutlets: Telemetry.fn("Merchants.listOutlets")((merchantId: string) =>
        store.listOutlets(merchantId as MerchantId)
      ),
      /** The merchant after; `undefined` when there is no such merchant. */
      setFeatures
    }
  })
}) {}
