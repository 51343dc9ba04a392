/**
 * The QR codes part of the store contract: outlets, codes (find, lock by qrid, list, update), their images
 * byte for byte, their payments, what the schema refuses, and rollback. `StoreContract.suite` runs it on
 * every adapter; every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Ids, QrCode, Store } from "@laari/core"
import { Effect, Either } from "effect"
import { Seed } from "../../Seed.js"
import {
  type It,
  Rollback,
  T0,
  day,
  dynamic,
  freshMerchant,
  freshQrid,
  hour,
  ids,
  imageBytes,
  insertQrCode,
  isDefect,
  merchantWithOutlet,
  minute,
  newQrCode,
  newQrPayment,
  plain,
  plus,
  second,
  tenantOf,
  uuid
} from "../support/Helpers.js"

export const tests = (it: It): void => {
  describe("QR codes", () => {
    it.effect("outlets: a merchant's own outlet is found, another merchant's or none is not", () =>
      Effect.gen(function* () {
        const seed = yield* Seed
        const outlets = yield* Store.OutletsStore
        const { merchant, outlet } = yield* merchantWithOutlet()
        const second = yield* seed.outlet(merchant.id, "Orchid Magu ބައްޕަ")
        const other = yield* merchantWithOutlet()
        expect(outlet).toEqual({ id: outlet.id, merchantId: merchant.id, name: "Majeedhee Magu" })
        expect(Number.isSafeInteger(outlet.id) && outlet.id > 0).toBe(true)
        expect(second.id).not.toBe(outlet.id)
        expect(yield* outlets.find(merchant.id, outlet.id)).toEqual(outlet)
        expect(yield* outlets.find(merchant.id, second.id)).toEqual(second)
        expect(yield* outlets.find(merchant.id, other.outlet.id)).toBeUndefined()
        expect(yield* outlets.find(other.merchant.id, outlet.id)).toBeUndefined()
        for (const id of [0, -1, 2 ** 31, 2 ** 53, 1.5])
          expect(yield* outlets.find(merchant.id, id)).toBeUndefined()
        expect(yield* outlets.find((yield* uuid) as Ids.MerchantId, outlet.id)).toBeUndefined()
      })
    )

    it.effect("insert, then find by id and by reference (also locked), and lockByQrid", () =>
      Effect.gen(function* () {
        const store = yield* Store.QrCodesStore
        const tx = yield* Store.Transactor
        const { outlet, tenant } = yield* merchantWithOutlet()
        const fixed = yield* insertQrCode(tenant, outlet.id, { description: "Till by the door" })
        const timed = yield* insertQrCode(tenant, outlet.id, {
          ...dynamic(),
          title: "ބައްޕަ ކެފޭ",
          reference: "ORDER 7/2026"
        })
        for (const code of [fixed, timed]) {
          expect(plain(yield* store.find(tenant, Ids.lookup(code.id)))).toEqual(plain(code))
          expect(plain(yield* store.find(tenant, Ids.lookup(code.id.toUpperCase())))).toEqual(plain(code))
          expect(plain(yield* store.find(tenant, Ids.lookup(code.reference)))).toEqual(plain(code))
          const locked = yield* tx.withTransaction(
            store.find(tenant, Ids.lookup(code.reference), { forUpdate: true })
          )
          expect(plain(locked)).toEqual(plain(code))
          expect(plain(yield* tx.withTransaction(store.lockByQrid("test", code.qrid)))).toEqual(plain(code))
        }
        expect(yield* store.find(tenant, Ids.lookup(yield* uuid))).toBeUndefined()
        expect(yield* store.find(tenant, Ids.lookup("no-such-reference"))).toBeUndefined()
        expect(yield* store.find(tenant, { _tag: "ById", id: "not-a-uuid" })).toBeUndefined()
        expect(yield* store.lockByQrid("test", yield* freshQrid)).toBeUndefined()
        expect(yield* store.lockByQrid("test", "")).toBeUndefined()
        // Text no database row can hold finds nothing, rather than failing.
        expect(yield* store.find(tenant, Ids.lookup("ORDER\u00007"))).toBeUndefined()
        expect(yield* store.lockByQrid("test", `${fixed.qrid}\u0000`)).toBeUndefined()
      })
    )

    it.effect(
      "another merchant's or environment's code is not found; lockByQrid looks in one environment",
      () =>
        Effect.gen(function* () {
          const store = yield* Store.QrCodesStore
          const owner = yield* merchantWithOutlet()
          const other = yield* merchantWithOutlet()
          const code = yield* insertQrCode(owner.tenant, owner.outlet.id)
          const live = yield* insertQrCode(tenantOf(owner.merchant, "live"), owner.outlet.id)
          for (const tenant of [
            other.tenant,
            tenantOf(owner.merchant, "live"),
            tenantOf(other.merchant, "live")
          ]) {
            expect(yield* store.find(tenant, Ids.lookup(code.id))).toBeUndefined()
            expect(yield* store.find(tenant, Ids.lookup(code.reference))).toBeUndefined()
          }
          expect(yield* store.list(other.tenant, { limit: 100, offset: 0 })).toEqual([])
          expect(ids(yield* store.list(owner.tenant, { limit: 100, offset: 0 }))).toEqual([code.id])
          expect(ids(yield* store.list(tenantOf(owner.merchant, "live"), { limit: 100, offset: 0 }))).toEqual(
            [live.id]
          )
          // A scanned qrid has no tenant: it names its code in its own environment, and nowhere else.
          expect((yield* store.lockByQrid("test", code.qrid))?.id).toBe(code.id)
          expect(yield* store.lockByQrid("live", code.qrid)).toBeUndefined()
          expect((yield* store.lockByQrid("live", live.qrid))?.id).toBe(live.id)
          expect(yield* store.lockByQrid("test", live.qrid)).toBeUndefined()
        })
    )

    it.effect("a duplicate reference is DuplicateReference; the same reference elsewhere is fine", () =>
      Effect.gen(function* () {
        const store = yield* Store.QrCodesStore
        const { merchant, outlet, tenant } = yield* merchantWithOutlet()
        const other = yield* merchantWithOutlet()
        const first = yield* insertQrCode(tenant, outlet.id)
        const again = yield* newQrCode(tenant, outlet.id, { reference: first.reference, ...dynamic() })
        const refused = yield* Effect.flip(store.insert(again))
        expect(refused).toBeInstanceOf(Store.DuplicateReference)
        expect(refused).toMatchObject({ _tag: "DuplicateReference", reference: first.reference })
        expect(yield* store.find(tenant, Ids.lookup(again.id))).toBeUndefined()
        expect(yield* store.lockByQrid("test", again.qrid)).toBeUndefined()
        expect((yield* store.find(tenant, Ids.lookup(first.reference)))?.id).toBe(first.id)

        const elsewhere = [
          yield* newQrCode(other.tenant, other.outlet.id, { reference: first.reference }),
          yield* newQrCode(tenantOf(merchant, "live"), outlet.id, { reference: first.reference })
        ]
        for (const code of elsewhere) {
          yield* store.insert(code)
          expect((yield* store.find(code, Ids.lookup(first.reference)))?.id).toBe(code.id)
        }
      })
    )

    it.effect(
      "the schema refuses, as a defect, a reused qrid, another merchant's outlet, a misshapen type",
      () =>
        Effect.gen(function* () {
          const store = yield* Store.QrCodesStore
          const { outlet, tenant } = yield* merchantWithOutlet()
          const other = yield* merchantWithOutlet()
          const taken = yield* insertQrCode(other.tenant, other.outlet.id)
          const refusals: ReadonlyArray<readonly [string, Partial<QrCode.QrCode>]> = [
            ["the qrid of another merchant's code", { qrid: taken.qrid }],
            ["another merchant's outlet", { outletId: other.outlet.id }],
            ["a static code with an amount", { amount: 1_000 }],
            ["a dynamic code below 100 laari", dynamic(99)],
            ["a dynamic code without an amount", { ...dynamic(), amount: null }],
            ["a dynamic code without an expiry", { ...dynamic(), expiresAt: null }],
            ["a static code with an expiry", { expiresAt: plus(T0, minute) }],
            ["an INACTIVE code without deactivatedAt", { status: "INACTIVE" }]
          ]
          for (const [what, overrides] of refusals) {
            const code = yield* newQrCode(tenant, outlet.id, overrides)
            expect(isDefect(yield* Effect.exit(store.insert(code))), what).toBe(true)
            expect(yield* store.find(tenant, Ids.lookup(code.id)), what).toBeUndefined()
          }
          // The smallest dynamic code is fine.
          const smallest = yield* insertQrCode(tenant, outlet.id, dynamic(100))
          expect((yield* store.find(tenant, Ids.lookup(smallest.id)))?.amount).toBe(100)
        })
    )

    it.effect("list is newest first, filters by outlet and type, pages by limit and offset", () =>
      Effect.gen(function* () {
        const seed = yield* Seed
        const store = yield* Store.QrCodesStore
        const { merchant, outlet: a, tenant } = yield* merchantWithOutlet()
        const b = yield* seed.outlet(merchant.id, "Second outlet")
        const other = yield* merchantWithOutlet()
        const shapes: ReadonlyArray<readonly [Store.Outlet, QrCode.Type]> = [
          [a, "STATIC"],
          [b, "DYNAMIC"],
          [a, "DYNAMIC"],
          [a, "STATIC"],
          [b, "STATIC"]
        ]
        const made = yield* Effect.forEach(shapes, ([outlet, type], i) =>
          newQrCode(tenant, outlet.id, {
            ...(type === "DYNAMIC" ? dynamic(1_000 * (i + 1)) : {}),
            createdAt: plus(T0, (i + 1) * minute)
          })
        )
        // Inserted out of order: the order of a list comes from `createdAt`, not from insertion.
        for (const i of [2, 0, 4, 1, 3]) yield* store.insert(made[i]!)
        // Two created in the same instant: the one inserted later is newer.
        const tieFirst = yield* insertQrCode(tenant, b.id, { createdAt: plus(T0, 10 * minute) })
        const tieSecond = yield* insertQrCode(tenant, b.id, { createdAt: plus(T0, 10 * minute) })
        yield* insertQrCode(other.tenant, other.outlet.id, { createdAt: plus(T0, 3 * minute) })
        yield* insertQrCode(tenantOf(merchant, "live"), a.id, { createdAt: plus(T0, 3 * minute) })

        const newest = [tieSecond, tieFirst, ...[...made].reverse()]
        const list = (filter: Partial<Store.QrCodeFilter>) =>
          Effect.map(store.list(tenant, { limit: 25, offset: 0, ...filter }), ids)
        expect(yield* list({})).toEqual(ids(newest))
        expect(plain(yield* store.list(tenant, { limit: 25, offset: 0 }))).toEqual(plain(newest))
        expect(yield* list({ outletId: a.id })).toEqual(ids(newest.filter((c) => c.outletId === a.id)))
        expect(yield* list({ outletId: b.id })).toEqual(ids(newest.filter((c) => c.outletId === b.id)))
        expect(yield* list({ type: "DYNAMIC" })).toEqual([made[2]!.id, made[1]!.id])
        expect(yield* list({ type: "STATIC" })).toEqual(ids(newest.filter((c) => c.type === "STATIC")))
        expect(yield* list({ outletId: a.id, type: "DYNAMIC" })).toEqual([made[2]!.id])
        expect(yield* list({ outletId: b.id, type: "STATIC", limit: 2, offset: 1 })).toEqual([
          tieFirst.id,
          made[4]!.id
        ])
        expect(yield* list({ limit: 2, offset: 1 })).toEqual(ids(newest.slice(1, 3)))
        expect(yield* list({ limit: 1, offset: 6 })).toEqual([newest[6]!.id])
        expect(yield* list({ offset: 7 })).toEqual([])
        // An outlet that is not the merchant's, or no outlet at all, lists nothing.
        for (const outletId of [other.outlet.id, 0, -1, 2 ** 31, 2 ** 53])
          expect(yield* list({ outletId })).toEqual([])
      })
    )

    it.effect(
      "update changes status, deactivatedAt, title and description, and nothing the payload fixes",
      () =>
        Effect.gen(function* () {
          const store = yield* Store.QrCodesStore
          const { merchant, outlet, tenant } = yield* merchantWithOutlet()
          const elsewhere = yield* (yield* Seed).outlet(merchant.id, "Elsewhere")
          const code = yield* insertQrCode(tenant, outlet.id, dynamic())
          const bystander = yield* insertQrCode(tenant, outlet.id, { createdAt: plus(T0, second) })

          const deactivated: QrCode.QrCode = {
            ...code,
            status: "INACTIVE",
            deactivatedAt: plus(T0, hour + 7),
            title: "Renamed ކެފޭ",
            description: "Now described"
          }
          yield* store.update(deactivated)
          expect(plain(yield* store.find(tenant, Ids.lookup(code.id)))).toEqual(plain(deactivated))
          yield* store.update({ ...deactivated, status: "ACTIVE", deactivatedAt: null, description: null })
          const reactivated = {
            ...deactivated,
            status: "ACTIVE" as const,
            deactivatedAt: null,
            description: null
          }
          expect(plain(yield* store.find(tenant, Ids.lookup(code.id)))).toEqual(plain(reactivated))

          // What the printed payload fixes stays as it was.
          yield* store.update({
            ...reactivated,
            outletId: elsewhere.id,
            amount: 99_999,
            payload: "something else",
            qrid: yield* freshQrid,
            reference: "another-reference",
            expiresAt: plus(T0, day),
            createdAt: plus(T0, day)
          })
          expect(plain(yield* store.find(tenant, Ids.lookup(code.id)))).toEqual(plain(reactivated))

          // An update names its tenant: it cannot reach another merchant's or environment's code.
          for (const other of [tenantOf(yield* freshMerchant()), tenantOf(merchant, "live")]) {
            yield* store.update({ ...reactivated, ...other, title: "Hijacked" })
            expect((yield* store.find(tenant, Ids.lookup(code.id)))?.title).toBe(reactivated.title)
          }
          expect(plain(yield* store.find(tenant, Ids.lookup(bystander.id)))).toEqual(plain(bystander))
        })
    )

    it.effect(
      "images round-trip byte for byte, are found by code id for anyone, and a new one replaces the old",
      () =>
        Effect.gen(function* () {
          const store = yield* Store.QrCodesStore
          const { outlet, tenant } = yield* merchantWithOutlet()
          const code = yield* insertQrCode(tenant, outlet.id)
          const plainCode = yield* insertQrCode(tenant, outlet.id)
          const png = imageBytes(1)
          const saved = Uint8Array.from(png)
          yield* store.saveImage(code, png)
          // The store kept its own copy: the caller may reuse its buffer.
          png.fill(0)
          const read = yield* store.image(code.id)
          expect(read).toBeInstanceOf(Uint8Array)
          expect(read!.length).toBe(saved.length)
          expect(Buffer.from(read!).equals(Buffer.from(saved))).toBe(true)
          // No tenant: the image is served without a key, by the unguessable id.
          expect(Buffer.from((yield* store.image(code.id.toUpperCase()))!).equals(Buffer.from(saved))).toBe(
            true
          )
          // What a reader does to its bytes does not reach the store.
          read!.fill(7)
          expect(Buffer.from((yield* store.image(code.id))!).equals(Buffer.from(saved))).toBe(true)

          const replacement = imageBytes(2, 333)
          yield* store.saveImage(code, replacement)
          expect(Buffer.from((yield* store.image(code.id))!).equals(Buffer.from(replacement))).toBe(true)
          yield* store.saveImage(plainCode, Uint8Array.of(0, 0, 0, 255, 0))
          expect(Array.from((yield* store.image(plainCode.id))!)).toEqual([0, 0, 0, 255, 0])

          expect(yield* store.image(yield* uuid)).toBeUndefined()
          expect(yield* store.image("not-a-uuid")).toBeUndefined()
          expect(yield* store.image("")).toBeUndefined()
        })
    )

    it.effect("payments: insert, then listByCode newest first", () =>
      Effect.gen(function* () {
        const payments = yield* Store.QrPaymentsStore
        const { merchant, outlet, tenant } = yield* merchantWithOutlet()
        const code = yield* insertQrCode(tenant, outlet.id)
        const other = yield* insertQrCode(tenant, outlet.id, dynamic())
        const made = yield* Effect.forEach([1, 2, 3], (i) =>
          newQrPayment(code, merchant.sandboxPayer, {
            amount: 1_000 + i,
            fee: 10 + i,
            netAmount: 990,
            amountRefunded: 0,
            createdAt: plus(T0, i * second + i)
          })
        )
        for (const i of [1, 2, 0]) yield* payments.insert(made[i]!)
        // Two in the same instant: the later insert is newer.
        const tieFirst = yield* newQrPayment(code, merchant.sandboxPayer, { createdAt: plus(T0, minute) })
        const tieSecond = yield* newQrPayment(code, merchant.sandboxPayer, { createdAt: plus(T0, minute) })
        yield* payments.insert(tieFirst)
        yield* payments.insert(tieSecond)
        yield* payments.insert(yield* newQrPayment(other, merchant.sandboxPayer))
        expect(plain(yield* payments.listByCode(code.id))).toEqual(
          plain([tieSecond, tieFirst, ...[...made].reverse()])
        )
        expect((yield* payments.listByCode(code.id.toUpperCase())).length).toBe(5)
        expect((yield* payments.listByCode(other.id)).map((p) => p.qrid)).toEqual([other.qrid])
        expect(yield* payments.listByCode(yield* uuid)).toEqual([])
        expect(yield* payments.listByCode("not-a-uuid")).toEqual([])
      })
    )

    it.effect("the schema refuses, as a defect, a payment that is not its code's or does not add up", () =>
      Effect.gen(function* () {
        const payments = yield* Store.QrPaymentsStore
        const { merchant, outlet, tenant } = yield* merchantWithOutlet()
        const elsewhere = yield* (yield* Seed).outlet(merchant.id, "Elsewhere")
        const code = yield* insertQrCode(tenant, outlet.id)
        const other = yield* merchantWithOutlet()
        const refusals: ReadonlyArray<readonly [string, Partial<QrCode.Payment>]> = [
          ["no such code", { qrCodeId: yield* uuid }],
          ["another qrid", { qrid: yield* freshQrid }],
          ["another merchant", { merchantId: other.merchant.id }],
          ["another environment", { environment: "live" }],
          ["another outlet", { outletId: elsewhere.id }],
          ["fee and net amount that do not add up", { fee: 100, netAmount: 100 }],
          ["a negative fee", { fee: -1, netAmount: 12_551 }],
          ["below 100 laari", { amount: 99, fee: 0, netAmount: 99 }]
        ]
        for (const [what, overrides] of refusals) {
          const payment = yield* newQrPayment(code, merchant.sandboxPayer, overrides)
          expect(isDefect(yield* Effect.exit(payments.insert(payment))), what).toBe(true)
        }
        expect(yield* payments.listByCode(code.id)).toEqual([])
      })
    )

    it.effect("a rolled-back transaction keeps no code, image or payment", () =>
      Effect.gen(function* () {
        const tx = yield* Store.Transactor
        const store = yield* Store.QrCodesStore
        const payments = yield* Store.QrPaymentsStore
        const { merchant, outlet, tenant } = yield* merchantWithOutlet()
        const code = yield* newQrCode(tenant, outlet.id)
        const payment = yield* newQrPayment(code, merchant.sandboxPayer)
        const outcome = yield* tx
          .withTransaction(
            Effect.gen(function* () {
              yield* store.insert(code)
              yield* store.saveImage(code, imageBytes(3))
              yield* payments.insert(payment)
              expect(yield* store.image(code.id)).toBeDefined()
              return yield* new Rollback()
            })
          )
          .pipe(Effect.either)
        expect(Either.isLeft(outcome)).toBe(true)
        expect(yield* store.find(tenant, Ids.lookup(code.id))).toBeUndefined()
        expect(yield* store.lockByQrid("test", code.qrid)).toBeUndefined()
        expect(yield* store.image(code.id)).toBeUndefined()
        expect(yield* payments.listByCode(code.id)).toEqual([])
        // The reference and the qrid are free again.
        yield* store.insert(code)
        expect((yield* store.find(tenant, Ids.lookup(code.reference)))?.id).toBe(code.id)
      })
    )
  })
}
