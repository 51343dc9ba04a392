/**
 * QR codes in the memory world of `Testkit.layer`: the renderer it uses (the placeholder, or the one it is
 * given), outlets from `Seed`, and expiry on the controllable clock. The service's rules themselves are in
 * the store contract (`MemoryStore.test.ts`), which runs them on every adapter.
 */
import { describe, expect, it } from "@effect/vitest"
import { Errors, type Ids, QrCode, QrCodes, QrImages, type Store } from "@laari/core"
import { Effect, Exit, Layer } from "effect"
import { ControllableClock } from "../src/ControllableClock.js"
import * as MemoryQrImages from "../src/MemoryQrImages.js"
import { Seed } from "../src/Seed.js"
import * as Testkit from "../src/Testkit.js"

const world = (options: Testkit.Options = {}) => Effect.provide(Testkit.layer(options))

const staticRequest = (outletId: number): QrCode.Request => ({
  outletId,
  type: "STATIC",
  amount: null,
  expiresInMinutes: null,
  title: null,
  description: null,
  reference: null
})

const setup = Effect.gen(function* () {
  const seed = yield* Seed
  const merchant = yield* seed.merchant({ name: "Bappa Cafe" })
  const outlet = yield* seed.outlet(merchant.id, "Majeedhee Magu")
  const tenant: Ids.Tenant = { merchantId: merchant.id, environment: "test" }
  return { seed, merchant, outlet, tenant, qr: yield* QrCodes.QrCodes }
})

describe("QR codes in Testkit.layer", () => {
  it.effect(
    "without a renderer, a static code's image is the payload's UTF-8 bytes: a placeholder, not a PNG",
    () =>
      Effect.gen(function* () {
        const { outlet, tenant, qr } = yield* setup
        const code = yield* qr.create(tenant, staticRequest(outlet.id))
        const image = (yield* qr.image(code.id))!
        expect(Buffer.from(image).equals(Buffer.from(code.payload, "utf8"))).toBe(true)
        expect(Array.from(image.subarray(0, 4))).not.toEqual([0x89, 0x50, 0x4e, 0x47])
        expect(MemoryQrImages.placeholderBytes("ބ")).toEqual(Uint8Array.of(0xde, 0x84))
      }).pipe(world())
  )

  it.effect("a renderer given as an option renders every static code", () =>
    Effect.gen(function* () {
      const { outlet, tenant, qr } = yield* setup
      const code = yield* qr.create(tenant, staticRequest(outlet.id))
      expect(Array.from((yield* qr.image(code.id))!)).toEqual([0x89, 0x50, 0x4e, 0x47, code.payload.length])
      expect(yield* QrImages.QrImages).toBeDefined()
    }).pipe(
      world({
        renderer: Layer.succeed(QrImages.QrImages, {
          renderPng: (payload) => Effect.succeed(Uint8Array.of(0x89, 0x50, 0x4e, 0x47, payload.length))
        })
      })
    )
  )

  it.effect("a failing renderer fails a static create with ServiceUnavailable and keeps nothing", () =>
    Effect.gen(function* () {
      const { outlet, tenant, qr } = yield* setup
      const error = yield* Effect.flip(qr.create(tenant, staticRequest(outlet.id)))
      expect(error).toBeInstanceOf(Errors.ServiceUnavailable)
      expect(error.message).toBe("The QR image could not be rendered")
      expect(yield* qr.list(tenant, { limit: 100, offset: 0 })).toEqual([])
    }).pipe(world({ renderer: MemoryQrImages.layerFailing }))
  )

  it.effect("Seed.outlet numbers outlets from 1 across merchants; an unknown merchant is a defect", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const a = yield* seed.merchant({ name: "A" })
      const b = yield* seed.merchant({ name: "B" })
      const made: Array<Store.Outlet> = [
        yield* seed.outlet(a.id, "One"),
        yield* seed.outlet(b.id, "Two"),
        yield* seed.outlet(a.id, "Three")
      ]
      expect(made).toEqual([
        { id: 1, merchantId: a.id, name: "One" },
        { id: 2, merchantId: b.id, name: "Two" },
        { id: 3, merchantId: a.id, name: "Three" }
      ])
      const exit = yield* Effect.exit(seed.outlet(b.sandboxPayer as unknown as Ids.MerchantId, "Nobody's"))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* seed.outlet(b.id, "Four")).toEqual({ id: 4, merchantId: b.id, name: "Four" })
    }).pipe(world())
  )

  it.effect(
    "a dynamic code lives on the controllable clock: payable until expiresAt, refused from then",
    () =>
      Effect.gen(function* () {
        const { seed, outlet, tenant, qr } = yield* setup
        const clock = yield* ControllableClock
        const customer = yield* seed.customer({ environment: "test", phone: "+960 7000001", balance: 50_000 })
        const request = {
          ...staticRequest(outlet.id),
          type: "DYNAMIC" as const,
          amount: 1_000,
          expiresInMinutes: 2
        }
        const early = yield* qr.create(tenant, request)
        const late = yield* qr.create(tenant, request)
        const pay = (code: QrCode.QrCode) =>
          qr.pay({ environment: "test", customerId: customer.id, payload: code.payload, amount: null })
        yield* clock.advance("119 seconds")
        expect((yield* pay(early)).amount).toBe(1_000)
        yield* clock.advance("1 second")
        expect(yield* Effect.flip(pay(late))).toMatchObject({
          _tag: "QrPaymentRefused",
          reason: "expired",
          message: QrCode.paymentMessages.expired
        })
      }).pipe(world({ start: "2026-03-31T10:00:00Z" }))
  )
})
