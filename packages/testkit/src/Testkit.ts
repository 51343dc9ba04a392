/**
 * Everything over memory in one layer: a host or a test gets working services with
 * `Effect.provide(Testkit.layer())`.
 */
import {
  Crypto,
  type DeliveriesStore,
  Engine,
  type NoticeOutbox,
  type QrImages,
  type Store,
  type WebhookEndpoint
} from "@laari/core"
import type { DateTime } from "effect"
import { Layer } from "effect"
import * as ControllableClock from "./ControllableClock.js"
import * as MemoryBalance from "./MemoryBalance.js"
import * as MemoryDb from "./MemoryDb.js"
import * as MemoryMerchants from "./MemoryMerchants.js"
import * as MemoryQrImages from "./MemoryQrImages.js"
import * as MemorySeed from "./MemorySeed.js"
import * as MemoryStore from "./MemoryStore.js"
import * as MemoryWallet from "./MemoryWallet.js"
import type * as Seed from "./Seed.js"

/** Every port of core (what a host brings): storage, ledger, the webhook delivery log, randomness. */
export type CorePorts =
  | Store.Ports
  | DeliveriesStore.DeliveriesStore
  | NoticeOutbox.NoticeOutbox
  | Crypto.Crypto

/**
 * The ports over a fresh `MemoryDb`, with `Seed`, the memory-only handles, and the sealer that keeps
 * webhook secrets as they are (`WebhookEndpoint.plainSealer`).
 */
export const ports = (): Layer.Layer<
  CorePorts | WebhookEndpoint.SecretSealer | Seed.Seed | MemoryDb.MemoryDb | MemoryWallet.MemoryWallet
> =>
  MemorySeed.layer.pipe(
    Layer.provideMerge(MemoryMerchants.layer),
    Layer.provideMerge(Layer.mergeAll(MemoryStore.layer, MemoryWallet.layer, MemoryBalance.layer)),
    Layer.provideMerge(Layer.merge(MemoryDb.layer, Crypto.layerWeb))
  )

export interface Options {
  /** Where the controllable clock starts (default `ControllableClock.DefaultStart`, 2026-03-31T10:00:00Z). */
  readonly start?: DateTime.DateTime.Input
  /**
   * How `QrCodes` renders a static code's image. Default `MemoryQrImages.layer`, which is NOT a PNG (the
   * payload's UTF-8 bytes): a placeholder for hosts that render images themselves. The testkit depends on
   * no QR library; pass a real renderer (the server's `QrPng.layer`, or a host's own) to get PNGs.
   */
  readonly renderer?: Layer.Layer<QrImages.QrImages>
}

export type Services =
  | CorePorts
  | WebhookEndpoint.SecretSealer
  | Seed.Seed
  | MemoryDb.MemoryDb
  | MemoryWallet.MemoryWallet
  | QrImages.QrImages
  | Engine.Services
  | ControllableClock.ControllableClock

/**
 * A whole memory world: ports, `Seed`, core's `Engine` (with `options.renderer` for QR images) and the
 * controllable clock, which is also installed as the default `Clock` of whatever this layer is provided
 * to. Each call is a new, empty world.
 */
export const layer = (options: Options = {}): Layer.Layer<Services> =>
  ControllableClock.layer(options).pipe(
    Layer.provideMerge(Engine.layer),
    Layer.provideMerge(options.renderer ?? MemoryQrImages.layer),
    Layer.provideMerge(ports())
  )
