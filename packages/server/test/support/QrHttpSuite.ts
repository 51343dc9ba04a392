/**
 * The QR code API over real HTTP (read shape, states, endpoints, errors), run against each database.
 */
import { Emv, QrScheme } from "@laari/core"
import { Either } from "effect"
import jsQRModule from "jsqr"
import { PNG } from "pngjs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "./Fixtures.js"
import type { TestServer } from "./TestServer.js"

const isoOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:00$/
const readFields = [
  "id",
  "type",
  "status",
  "outletId",
  "title",
  "description",
  "amount",
  "payload",
  "qrid",
  "imageUrl",
  "reference",
  "expiresAt",
  "createdAt"
].sort()

type JsQr = typeof jsQRModule.default
/** jsqr is CommonJS with `exports.default`: TypeScript sees the module object, the test runner the function. */
const jsQR: JsQr = (jsQRModule as unknown as { default?: JsQr }).default ?? (jsQRModule as unknown as JsQr)

/** The text a PNG's QR code carries, read back with a QR decoder. */
const decodePng = (bytes: Uint8Array): string | undefined => {
  const png = PNG.sync.read(Buffer.from(bytes))
  const found = jsQR(new Uint8ClampedArray(png.data), png.width, png.height)
  return found === null ? undefined : new TextDecoder().decode(Uint8Array.from(found.binaryData))
}

export const suite = (name: string, start: () => Promise<TestServer>) =>
  describe(name, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await start()
    }, 120_000)
    afterAll(async () => {
      await server?.close()
    })

    const create = (key: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
      server.request("POST", "/qr-codes", { key, body, ...(headers ? { headers } : {}) })
    const pay = (key: string, body: Record<string, unknown>) =>
      server.request("POST", "/test-helpers/qr-codes/pay", { key, body })
    const balance = async (key: string) =>
      (await server.request("GET", "/test-helpers/payer", { key })).body.balance as number
    const advance = (seconds: number) => server.ops("POST", "/ops/clock/advance", { by_seconds: seconds })

    describe("keys and scopes (7.3)", () => {
      it("401 without a key, 403 for a publishable key or a key without qr:write", async () => {
        const m = await F.merchant(server)
        const noQr = await m.key("test", ["mandates:write", "payments:write"])
        for (const [method, path] of [
          ["POST", "/qr-codes"],
          ["GET", "/qr-codes"],
          ["GET", "/qr-codes/x"],
          ["POST", "/qr-codes/x/deactivate"]
        ] as const) {
          const body = method === "POST" ? { outlet_id: m.outletId } : undefined
          expect((await server.request(method, path, { body })).status, path).toBe(401)
          expect((await server.request(method, path, { key: m.publishable, body })).status, path).toBe(403)
          const denied = await server.request(method, path, { key: noQr, body })
          expect(denied.status, path).toBe(403)
          expect(denied.body.message).toContain("qr:write")
        }
      })
    })

    describe("POST /qr-codes", () => {
      it("creates a static code with a hosted PNG that decodes back to the payload", async () => {
        const m = await F.merchant(server, { name: "Dhon Manik Cafe", city: "Male" })
        const res = await create(m.test, { outlet_id: m.outletId, reference: "counter-1" })
        expect(res.status).toBe(201)
        expect(Object.keys(res.body).sort()).toEqual(readFields)
        expect(res.body).toMatchObject({
          type: "STATIC",
          status: "ACTIVE",
          outletId: String(m.outletId),
          title: "Main",
          description: null,
          amount: null,
          reference: "counter-1",
          expiresAt: null
        })
        expect(res.body.createdAt).toMatch(isoOffset)
        expect(res.body.qrid).toMatch(QrScheme.qridFormat)
        expect(res.body.imageUrl).toBe(`http://laari.test/qr/${res.body.id}.png`)
        expect(Emv.verifyCrc(res.body.payload)).toBe(true)
        const parsed = QrScheme.parse(res.body.payload)
        expect(Either.isRight(parsed) && parsed.right).toMatchObject({
          type: "STATIC",
          qrid: res.body.qrid,
          amount: null
        })
        const image = await fetch(`${server.baseUrl}/qr/${res.body.id}.png`)
        expect(image.status).toBe(200)
        expect(image.headers.get("content-type")).toBe("image/png")
        expect(image.headers.get("cache-control")).toContain("max-age=31536000")
        expect(decodePng(new Uint8Array(await image.arrayBuffer()))).toBe(res.body.payload)
        expect((await fetch(`${server.baseUrl}/qr/${res.body.id}.jpg`)).status).toBe(404)
        expect((await fetch(`${server.baseUrl}/qr/00000000-0000-4000-8000-000000000000.png`)).status).toBe(
          404
        )
      })

      it("creates a dynamic code: fixed amount, no image, expiring after expires_in_minutes (default 15)", async () => {
        const m = await F.merchant(server)
        const now = Date.parse((await server.ops("GET", "/ops/clock")).body.now)
        const res = await create(m.test, {
          outlet_id: m.outletId,
          type: "DYNAMIC",
          amount: 12_550,
          title: "Table 4",
          description: "Lunch"
        })
        expect(res.status).toBe(201)
        expect(res.body).toMatchObject({
          type: "DYNAMIC",
          amount: 12_550,
          imageUrl: null,
          title: "Table 4",
          description: "Lunch"
        })
        expect(Date.parse(res.body.expiresAt) - now).toBe(15 * 60_000)
        expect(res.body.payload).toContain("5406125.50")
        expect(res.body.reference).toBe(res.body.qrid)
        const five = await create(m.test, {
          outlet_id: m.outletId,
          type: "DYNAMIC",
          amount: 500,
          expires_in_minutes: 5
        })
        expect(Date.parse(five.body.expiresAt) - now).toBe(5 * 60_000)
      })

      it("answers 422 for a dynamic code without amount, a static code with one, or an expiry out of range", async () => {
        const m = await F.merchant(server)
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ type: "DYNAMIC" }, "amount"],
          [{ type: "DYNAMIC", amount: 99 }, "amount"],
          [{ type: "DYNAMIC", amount: 150.5 }, "amount"],
          [{ type: "STATIC", amount: 1000 }, "amount"],
          [{ amount: 1000 }, "amount"],
          [{ type: "DYNAMIC", amount: 1000, expires_in_minutes: 0 }, "expires_in_minutes"],
          [{ type: "DYNAMIC", amount: 1000, expires_in_minutes: 16 }, "expires_in_minutes"],
          [{ type: "STATIC", expires_in_minutes: 5 }, "expires_in_minutes"],
          [{ title: "t".repeat(256) }, "title"],
          [{ description: "d".repeat(256) }, "description"],
          [{ reference: "r".repeat(256) }, "reference"],
          [{ title: "NUL\u0000" }, "title"],
          [{ type: "WEEKLY" }, "type"],
          [{ outlet_id: "1" }, "outlet_id"]
        ]
        for (const [overrides, field] of cases) {
          const res = await create(m.test, { outlet_id: m.outletId, ...overrides })
          expect(res.status, JSON.stringify(overrides)).toBe(422)
          expect(
            res.body.errors.map((e: { field: string }) => e.field),
            JSON.stringify(overrides)
          ).toContain(field)
        }
        expect((await server.request("GET", "/qr-codes", { key: m.test })).body).toEqual([])
      })

      it("answers 404 for an outlet that is unknown or another merchant's", async () => {
        const a = await F.merchant(server)
        const b = await F.merchant(server)
        expect((await create(a.test, { outlet_id: b.outletId })).status).toBe(404)
        expect((await create(a.test, { outlet_id: 999_999 })).status).toBe(404)
      })

      it("keeps references unique per merchant and replays with Idempotency-Key", async () => {
        const m = await F.merchant(server)
        expect((await create(m.test, { outlet_id: m.outletId, reference: "dup" })).status).toBe(201)
        expect((await create(m.test, { outlet_id: m.outletId, reference: "dup" })).status).toBe(409)
        const first = await create(
          m.test,
          { outlet_id: m.outletId, type: "DYNAMIC", amount: 700 },
          { "idempotency-key": "qr-1" }
        )
        const again = await create(
          m.test,
          { outlet_id: m.outletId, type: "DYNAMIC", amount: 700 },
          { "idempotency-key": "qr-1" }
        )
        expect(again.text).toBe(first.text)
        expect(again.headers.get("idempotent-replay")).toBe("true")
      })
    })

    describe("GET /qr-codes", () => {
      it("fetches by id or reference, scoped to the merchant and environment; lists newest first with filters", async () => {
        const m = await F.merchant(server)
        const other = await F.merchant(server)
        const second = await server.ops("POST", `/ops/merchants/${m.id}/outlets`, { name: "Harbour" })
        const a = (await create(m.test, { outlet_id: m.outletId, reference: "a" })).body
        await advance(1)
        const b = (await create(m.test, { outlet_id: second.body.id, type: "DYNAMIC", amount: 1000 })).body
        await advance(1)
        const c = (await create(m.test, { outlet_id: m.outletId, type: "DYNAMIC", amount: 2000 })).body
        expect((await server.request("GET", `/qr-codes/${a.id}`, { key: m.test })).body).toEqual(a)
        expect((await server.request("GET", "/qr-codes/a", { key: m.test })).body.id).toBe(a.id)
        expect((await server.request("GET", `/qr-codes/${a.id}`, { key: other.test })).status).toBe(404)
        expect((await server.request("GET", `/qr-codes/${a.id}`, { key: m.live })).status).toBe(404)
        expect((await server.request("GET", "/qr-codes/nope", { key: m.test })).status).toBe(404)
        const ids = async (q: string) =>
          (await server.request("GET", `/qr-codes${q}`, { key: m.test })).body.map((x: any) => x.id)
        expect(await ids("")).toEqual([c.id, b.id, a.id])
        expect(await ids(`?outlet_id=${m.outletId}`)).toEqual([c.id, a.id])
        expect(await ids("?type=DYNAMIC")).toEqual([c.id, b.id])
        expect(await ids("?limit=1&offset=1")).toEqual([b.id])
        for (const q of ["?limit=0", "?limit=101", "?offset=-1", "?type=OTHER"])
          expect((await server.request("GET", `/qr-codes${q}`, { key: m.test })).status, q).toBe(422)
        expect((await server.request("GET", "/qr-codes", { key: other.test })).body).toEqual([])
      })
    })

    describe("POST /qr-codes/{id}/deactivate", () => {
      it("deactivates once (kept, INACTIVE), then 400; a customer is told it is no longer active", async () => {
        const m = await F.merchant(server)
        const code = (await create(m.test, { outlet_id: m.outletId, reference: "door" })).body
        const res = await server.request("POST", "/qr-codes/door/deactivate", { key: m.test })
        expect(res.status).toBe(200)
        expect(res.body).toEqual({ id: code.id, status: "INACTIVE", type: "STATIC" })
        const again = await server.request("POST", `/qr-codes/${code.id}/deactivate`, { key: m.test })
        expect(again.status).toBe(400)
        expect(typeof again.body.message).toBe("string")
        expect((await server.request("GET", `/qr-codes/${code.id}`, { key: m.test })).body.status).toBe(
          "INACTIVE"
        )
        const paid = await pay(m.test, { payload: code.payload, amount: 1000 })
        expect(paid.status).toBe(409)
        expect(paid.body.message).toBe("This QR code is no longer active")
        const other = await F.merchant(server)
        expect(
          (await server.request("POST", `/qr-codes/${code.id}/deactivate`, { key: other.test })).status
        ).toBe(404)
      })
    })

    describe("paying a scanned code (test helper)", () => {
      it("pays a dynamic code exactly its amount: money moves, the payment carries the qrid, the event is recorded", async () => {
        const m = await F.merchant(server)
        const code = (await create(m.test, { outlet_id: m.outletId, type: "DYNAMIC", amount: 12_550 })).body
        const before = await balance(m.test)
        const res = await pay(m.test, { payload: code.payload })
        expect(res.status).toBe(201)
        expect(Object.keys(res.body).sort()).toEqual([
          "amount",
          "amountRefunded",
          "createdAt",
          "fee",
          "id",
          "netAmount",
          "qrCodeId",
          "qrid"
        ])
        expect(res.body).toMatchObject({
          qrid: code.qrid,
          qrCodeId: code.id,
          amount: 12_550,
          fee: 126,
          netAmount: 12_424,
          amountRefunded: 0
        })
        expect(await balance(m.test)).toBe(before - 12_550)
        const events = await F.events(server, m.id, "qr_code.payment.succeeded")
        expect(events).toHaveLength(1)
        expect(events[0]!.data.object).toMatchObject({
          qrid: code.qrid,
          qr_code_id: code.id,
          amount: 12_550,
          fee: 126,
          net_amount: 12_424,
          reference: code.reference
        })
        const twice = await pay(m.test, { payload: code.payload, amount: 12_550 })
        expect(twice.status).toBe(409)
        expect(twice.body.message).toBe("This QR code has already been paid")
        expect(await balance(m.test)).toBe(before - 12_550)
        const other = (await create(m.test, { outlet_id: m.outletId, type: "DYNAMIC", amount: 12_550 })).body
        const wrong = await pay(m.test, { payload: other.payload, amount: 12_000 })
        expect(wrong.status).toBe(422)
        const exact = await pay(m.test, { payload: other.payload, amount: 12_550 })
        expect(exact.status).toBe(201)
        const payerId = (await server.request("GET", "/test-helpers/payer", { key: m.test })).body.customerId
        const notes = await server.ops("GET", `/ops/customers/${payerId}/notifications`)
        expect(notes.body.filter((n: any) => n.kind === "payment")).toHaveLength(2)
      })

      it("pays a static code the typed amount, at least 100", async () => {
        const m = await F.merchant(server)
        const code = (await create(m.test, { outlet_id: m.outletId })).body
        expect((await pay(m.test, { payload: code.payload })).status).toBe(422)
        expect((await pay(m.test, { payload: code.payload, amount: 99 })).status).toBe(422)
        const ok = await pay(m.test, { payload: code.payload, amount: 100 })
        expect(ok.status).toBe(201)
        expect(ok.body).toMatchObject({ amount: 100, fee: 1, netAmount: 99, qrid: code.qrid })
      })

      it("refuses a dynamic code at and after expiresAt", async () => {
        const m = await F.merchant(server)
        const code = (
          await create(m.test, {
            outlet_id: m.outletId,
            type: "DYNAMIC",
            amount: 1000,
            expires_in_minutes: 1
          })
        ).body
        await advance(59)
        expect((await pay(m.test, { payload: code.payload })).status).toBe(201)
        await advance(1)
        const late = await pay(m.test, { payload: code.payload })
        expect(late.status).toBe(409)
        expect(late.body.message).toBe("This QR code has expired")
        expect((await server.request("GET", `/qr-codes/${code.id}`, { key: m.test })).body.status).toBe(
          "ACTIVE"
        )
      })

      it("answers 422 for a payload that does not parse or fails its CRC, 404 for another scheme or an unknown qrid", async () => {
        const m = await F.merchant(server)
        const code = (await create(m.test, { outlet_id: m.outletId, type: "DYNAMIC", amount: 1000 })).body
        const crcBroken = `${code.payload.slice(0, -1)}${code.payload.endsWith("0") ? "1" : "0"}`
        expect((await pay(m.test, { payload: crcBroken })).status).toBe(422)
        expect((await pay(m.test, { payload: "hello" })).status).toBe(422)
        const pix =
          "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"
        expect((await pay(m.test, { payload: pix })).status).toBe(404)
        const unknown = Either.getOrThrow(
          QrScheme.build({
            type: "DYNAMIC",
            qrid: QrScheme.makeQrid(new Uint8Array(14).fill(7)),
            merchant: { id: m.id, name: "X", city: "Male", mcc: "5999" },
            outletId: m.outletId,
            amount: 1000
          })
        )
        expect((await pay(m.test, { payload: unknown })).status).toBe(404)
        expect(
          (
            await server.request("POST", "/test-helpers/qr-codes/pay", {
              key: m.live,
              body: { payload: code.payload }
            })
          ).status
        ).toBe(404)
      })

      it("answers 402 when the payer cannot cover it, and moves nothing", async () => {
        const m = await F.merchant(server)
        const code = (await create(m.test, { outlet_id: m.outletId, type: "DYNAMIC", amount: 5000 })).body
        await server.request("POST", "/test-helpers/payer", { key: m.test, body: { balance: 4999 } })
        const res = await pay(m.test, { payload: code.payload })
        expect(res.status).toBe(402)
        expect(await balance(m.test)).toBe(4999)
        expect(await F.events(server, m.id, "qr_code.payment.succeeded")).toEqual([])
      })
    })
  })
