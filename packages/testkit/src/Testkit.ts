/**
 * Everything over memory in one layer: a host or a test gets working services with
 * `Effect.provide(Testkit.layer())`.
 */
import {
  Background,
  Crypto,
  type DeliveriesStore,
  Engine,
  type NoticeOutbox,
  type QrImages,
  SecretSealer,
  type Store,
  WallClock,
  type Work
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

/**
 * Every port of core (what a host brings): storage, ledger, the webhook delivery log, randomness, and
 * wall time (the system's: signatures carry real time while the controllable clock moves the service's).
 */
export type CorePorts =
  | Store.Ports
  | DeliveriesStore.DeliveriesStore
  | NoticeOutbox.NoticeOutbox
  | Crypto.Crypto
  | WallClock.WallClock

/**
 * The ports over a fresh `MemoryDb`, with `Seed`, the memory-only handles, and the sealer that keeps
 * webhook secrets as they are (`SecretSealer.plainSealer`); wall time is the system's unless `wall`.
 */
export const ports = (
  wall: Layer.Layer<WallClock.WallClock> = WallClock.layer(() => Date.now())
): Layer.Layer<
  CorePorts | SecretSealer.SecretSealer | Seed.Seed | MemoryDb.MemoryDb | MemoryWallet.MemoryWallet
> =>
  MemorySeed.layer.pipe(
    Layer.provideMerge(MemoryMerchants.layer),
    Layer.provideMerge(Layer.mergeAll(MemoryStore.layer, MemoryWallet.layer, MemoryBalance.layer)),
    Layer.provideMerge(Layer.mergeAll(MemoryDb.layer, Crypto.layerWeb, wall))
  )

export interface Options {
  /** Where the controllable clock starts (default `ControllableClock.DefaultStart`, 2026-03-31T10:00:00Z). */
  readonly start?: DateTime.DateTime.Input
  /** Wall time, which signatures carry (default the system's; `WallClock.fixed` to check what was signed). */
  readonly wall?: Layer.Layer<WallClock.WallClock>
  /**
   * How `QrCodes` renders a static code's image. Default `MemoryQrImages.layer`, which is NOT a PNG (the
   * payload's UTF-8 bytes): a placeholder for hosts that render images themselves. The testkit depends on
   * no QR library; pass a real renderer (the server's `QrPng.layer`, or a host's own) to get PNGs.
   */
  readonly renderer?: Layer.Layer<QrImages.QrImages>
}

export type Services =
  | CorePorts
  | SecretSealer.SecretSealer
  | Seed.Seed
  | MemoryDb.MemoryDb
  | MemoryWallet.MemoryWallet
  | QrImages.QrImages
  | Engine.Services
  | Work.Jobs
  | ControllableClock.ControllableClock

/**
 * A whole memory world: ports, `Seed`, core's `Engine` (with `options.renderer` for QR images), its jobs
 * (`Background.layer`) and the controllable clock, which is also installed as the default `Clock` of
 * whatever this layer is provided to. Each call is a new, empty world.
 */
export const layer = (options: Options = {}): Layer.Layer<Services> =>
  ControllableClock.layer(options).pipe(
    Layer.provideMerge(Background.layer),
    Layer.provideMerge(Engine.layer),
    Layer.provideMerge(options.renderer ?? MemoryQrImages.layer),
    Layer.provideMerge(ports(options.wall))
  )
