/**
 * The QrCodes service on the adapter's store: creating codes (static and dynamic, their images, their
 * outlets), deactivating them, a renderer that fails, and (in `QrPaymentsOnStore`) paying them. Each test
 * runs on a manual clock of its own.
 */
import { describe, expect } from "@effect/vitest"
import { Errors, Ids, QrCode, QrCodes, QrScheme, Store } from "@laari/core"
import { DateTime, Effect, Either, Layer } from "effect"
import * as MemoryQrImages from "../../MemoryQrImages.js"
import {
  type It,
  ids,
  merchantWithOutlet,
  minute,
  plain,
  qrRequest,
  tenantOf,
  uuid
} from "../support/Helpers.js"
import { Now, iso, onManualClock } from "./ManualClock.js"
import * as QrPaymentsOnStore from "./QrPaymentsOnStore.js"

export const tests = (it: It): void => {
  describe("the QrCodes service on this store", () => {
    it.effect(
      "creates a static code: ACTIVE, titled after its outlet, its payload naming it, its image saved",
      () =>
        onManualClock(() =>
          Effect.gen(function* () {
            const qr = yield* QrCodes.QrCodes
            const { merchant, outlet, tenant } = yield* merchantWithOutlet({
              name: "Bappa Café",
              city: "Malé",
              mcc: "5812"
            })
            const code = yield* qr.create(tenant, qrRequest(outlet.id))
            expect(code).toMatchObject({
              merchantId: merchant.id,
              environment: "test",
              outletId: outlet.id,
              type: "STATIC",
              status: "ACTIVE",
              title: "Majeedhee Magu",
              description: null,
              amount: null,
              expiresAt: null,
              deactivatedAt: null,
              // Without a reference of the merchant's, the qrid is the reference.
              reference: code.qrid
            })
            expect(Ids.isUuid(code.id)).toBe(true)
            expect(QrScheme.isQrid(code.qrid)).toBe(true)
            expect(DateTime.formatIso(code.createdAt)).toBe(iso(Now))
            expect(Either.getOrThrow(QrScheme.parse(code.payload))).toEqual({
              type: "STATIC",
              qrid: code.qrid,
              amount: null,
              merchant: {
                id: merchant.id,
                name: "Bappa Cafe",
                city: "Male",
                mcc: "5812",
                nameLocal: null,
                cityLocal: null
              },
              outletId: outlet.id,
              outletLabel: "Majeedhee Magu"
            })
            const image = yield* qr.image(code.id)
            expect(image && Array.from(image)).toEqual(
              Array.from(MemoryQrImages.placeholderBytes(code.payload))
            )
            expect(plain(yield* qr.get(tenant, code.id))).toEqual(plain(code))
            expect(plain(yield* qr.get(tenant, code.qrid))).toEqual(plain(code))

            const named = yield* qr.create(
              tenant,
              qrRequest(outlet.id, { title: "Till 2", description: "By the door", reference: "till-2" })
            )
            expect(named).toMatchObject({
              title: "Till 2",
              description: "By the door",
              reference: "till-2"
            })
            expect(plain(yield* qr.get(tenant, "till-2"))).toEqual(plain(named))
            expect(ids(yield* qr.list(tenant, { limit: 25, offset: 0 }))).toEqual([named.id, code.id])
          })
        )
    )

    it.effect("creates a dynamic code expiring after expiresInMinutes (15 by default), with no image", () =>
      onManualClock(() =>
        Effect.gen(function* () {
          const qr = yield* QrCodes.QrCodes
          const { outlet, tenant } = yield* merchantWithOutlet()
          const five = yield* qr.create(
            tenant,
            qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550, expiresInMinutes: 5 })
          )
          expect(five).toMatchObject({ type: "DYNAMIC", status: "ACTIVE", amount: 12_550 })
          expect(DateTime.formatIso(five.expiresAt!)).toBe(iso(Now + 5 * minute))
          const parsed = Either.getOrThrow(QrScheme.parse(five.payload))
          expect(parsed).toMatchObject({ type: "DYNAMIC", amount: 12_550, qrid: five.qrid })
          const standard = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 100 }))
          expect(DateTime.formatIso(standard.expiresAt!)).toBe(iso(Now + 15 * minute))
          expect(yield* qr.image(five.id)).toBeUndefined()
          expect(yield* qr.image(standard.id)).toBeUndefined()
          expect(plain(yield* qr.get(tenant, five.id))).toEqual(plain(five))
        })
      )
    )

    it.effect(
      "refuses every rule of QrCode.validate with InvalidRequest naming the field, and keeps nothing",
      () =>
        onManualClock(() =>
          Effect.gen(function* () {
            const qr = yield* QrCodes.QrCodes
            const { outlet, tenant } = yield* merchantWithOutlet()
            const dyn = { type: "DYNAMIC", amount: 1_000 } as const
            const cases: ReadonlyArray<readonly [Partial<QrCode.Request>, string]> = [
              [{ title: "t".repeat(256) }, "title"],
              [{ description: "d".repeat(256) }, "description"],
              [{ reference: "r".repeat(256) }, "reference"],
              [{ reference: "   " }, "reference"],
              [{ reference: "" }, "reference"],
              [{ type: "DYNAMIC" }, "amount"],
              [{ ...dyn, amount: 99 }, "amount"],
              [{ ...dyn, amount: 150.5 }, "amount"],
              [{ ...dyn, amount: QrCode.MaxAmount + 1 }, "amount"],
              [{ ...dyn, expiresInMinutes: 0 }, "expiresInMinutes"],
              [{ ...dyn, expiresInMinutes: 16 }, "expiresInMinutes"],
              [{ ...dyn, expiresInMinutes: 2.5 }, "expiresInMinutes"],
              [{ amount: 1_000 }, "amount"],
              [{ expiresInMinutes: 5 }, "expiresInMinutes"]
            ]
            for (const [overrides, field] of cases) {
              const error = yield* Effect.flip(qr.create(tenant, qrRequest(outlet.id, overrides)))
              expect(error._tag, JSON.stringify(overrides)).toBe("InvalidRequest")
              if (error._tag !== "InvalidRequest") continue
              expect(
                error.errors.map((e) => e.field),
                JSON.stringify(overrides)
              ).toContain(field)
              expect(error.message).toBe(`${error.errors[0]!.field}: ${error.errors[0]!.message}`)
            }
            expect(yield* qr.list(tenant, { limit: 100, offset: 0 })).toEqual([])
            // The edges of every rule are allowed.
            for (const overrides of [
              { title: "t".repeat(255), description: "d".repeat(255), reference: "r".repeat(255) },
              { ...dyn, amount: 100, expiresInMinutes: 1 },
              { ...dyn, amount: QrCode.MaxAmount, expiresInMinutes: 15 }
            ] as const)
              yield* qr.create(tenant, qrRequest(outlet.id, overrides))
            expect(yield* qr.list(tenant, { limit: 100, offset: 0 })).toHaveLength(3)
          })
        )
    )

    it.effect("an outlet of another merchant, or none, is OutletNotFound", () =>
      onManualClock(() =>
        Effect.gen(function* () {
          const qr = yield* QrCodes.QrCodes
          const { tenant } = yield* merchantWithOutlet()
          const other = yield* merchantWithOutlet()
          for (const outletId of [other.outlet.id, 2 ** 31 - 1, 2 ** 31])
            expect(yield* Effect.flip(qr.create(tenant, qrRequest(outletId)))).toMatchObject({
              _tag: "OutletNotFound",
              message: "Outlet not found"
            })
          expect(yield* qr.list(tenant, { limit: 100, offset: 0 })).toEqual([])
        })
      )
    )

    it.effect("a reference the merchant already used is QrReferenceTaken; another merchant may use it", () =>
      onManualClock(() =>
        Effect.gen(function* () {
          const qr = yield* QrCodes.QrCodes
          const { outlet, tenant } = yield* merchantWithOutlet()
          const other = yield* merchantWithOutlet()
          const first = yield* qr.create(tenant, qrRequest(outlet.id, { reference: "counter" }))
          const refused = yield* Effect.flip(
            qr.create(tenant, qrRequest(outlet.id, { reference: "counter", type: "DYNAMIC", amount: 500 }))
          )
          expect(refused).toMatchObject({ _tag: "QrReferenceTaken" })
          expect(ids(yield* qr.list(tenant, { limit: 100, offset: 0 }))).toEqual([first.id])
          const theirs = yield* qr.create(other.tenant, qrRequest(other.outlet.id, { reference: "counter" }))
          expect((yield* qr.get(other.tenant, "counter")).id).toBe(theirs.id)
        })
      )
    )

    it.effect(
      "deactivate: INACTIVE and kept; again is QrCodeAlreadyInactive; another merchant's is not found",
      () =>
        onManualClock((clock) =>
          Effect.gen(function* () {
            const qr = yield* QrCodes.QrCodes
            const { outlet, tenant } = yield* merchantWithOutlet()
            const other = yield* merchantWithOutlet()
            const code = yield* qr.create(tenant, qrRequest(outlet.id, { reference: "door" }))
            expect(yield* Effect.flip(qr.deactivate(other.tenant, code.id))).toMatchObject({
              _tag: "QrCodeNotFound",
              message: "QR code not found"
            })
            expect(yield* Effect.flip(qr.deactivate(tenantOf(other.merchant, "live"), "door"))).toMatchObject(
              {
                _tag: "QrCodeNotFound"
              }
            )
            clock.set(Now + minute)
            const off = yield* qr.deactivate(tenant, "door")
            expect(off).toMatchObject({ id: code.id, type: "STATIC", status: "INACTIVE" })
            expect(DateTime.formatIso(off.deactivatedAt!)).toBe(iso(Now + minute))
            // Kept, and still served.
            expect(plain(yield* qr.get(tenant, code.id))).toEqual(plain(off))
            expect(ids(yield* qr.list(tenant, { limit: 100, offset: 0 }))).toEqual([code.id])
            expect(yield* qr.image(code.id)).toBeDefined()
            for (const idOrReference of [code.id, "door"])
              expect(yield* Effect.flip(qr.deactivate(tenant, idOrReference))).toMatchObject({
                _tag: "QrCodeAlreadyInactive",
                message: "QR code is already inactive"
              })
            expect(yield* Effect.flip(qr.deactivate(tenant, yield* uuid))).toMatchObject({
              _tag: "QrCodeNotFound"
            })
            expect(yield* Effect.flip(qr.get(other.tenant, code.id))).toMatchObject({
              _tag: "QrCodeNotFound"
            })
          })
        )
    )

    it.effect("concurrent deactivations of one code: exactly one wins, the others find it inactive", () =>
      onManualClock(() =>
        Effect.gen(function* () {
          const qr = yield* QrCodes.QrCodes
          const { outlet, tenant } = yield* merchantWithOutlet()
          const code = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 500 }))
          const outcomes = yield* Effect.all(
            Array.from({ length: 8 }, () => Effect.either(qr.deactivate(tenant, code.id))),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter(Either.isRight)).toHaveLength(1)
          for (const outcome of outcomes.filter(Either.isLeft))
            expect(outcome.left._tag).toBe("QrCodeAlreadyInactive")
          expect((yield* qr.get(tenant, code.id)).status).toBe("INACTIVE")
        })
      )
    )

    QrPaymentsOnStore.tests(it)

    it.effect("a renderer that fails fails the create with ServiceUnavailable, and nothing is kept", () =>
      onManualClock(() =>
        Effect.gen(function* () {
          const store = yield* Store.QrCodesStore
          const { outlet, tenant } = yield* merchantWithOutlet()
          const withoutImages = QrCodes.QrCodes.Default.pipe(Layer.provide(MemoryQrImages.layerFailing))
          const create = (request: QrCode.Request) =>
            Effect.flatMap(QrCodes.QrCodes, (qr) => qr.create(tenant, request)).pipe(
              Effect.provide(withoutImages)
            )
          const refused = yield* Effect.flip(create(qrRequest(outlet.id, { reference: "sticker" })))
          expect(refused).toBeInstanceOf(Errors.ServiceUnavailable)
          expect(refused.message).toBe("The QR image could not be rendered")
          expect(yield* store.find(tenant, Ids.lookup("sticker"))).toBeUndefined()
          expect(yield* store.list(tenant, { limit: 100, offset: 0 })).toEqual([])
          // A dynamic code has no image, so it does not need the renderer.
          const timed = yield* create(qrRequest(outlet.id, { type: "DYNAMIC", amount: 500 }))
          expect(ids(yield* store.list(tenant, { limit: 100, offset: 0 }))).toEqual([timed.id])
          // The reference was never taken.
          const code = yield* (yield* QrCodes.QrCodes).create(
            tenant,
            qrRequest(outlet.id, { reference: "sticker" })
          )
          expect((yield* store.find(tenant, Ids.lookup("sticker")))?.id).toBe(code.id)
        })
      )
    )
  })
}
