/**
 * The server's QR renderer: every PNG decodes back, with independent readers (pngjs for the image, jsQR
 * for the symbol), to exactly the payload it was given, ASCII and UTF-8 alike.
 */
import { describe, expect, it } from "@effect/vitest"
import { Emv, Errors, QrImages, QrScheme } from "@laari/core"
import { Effect, Either } from "effect"
import jsQRModule from "jsqr"
import { PNG } from "pngjs"
import QRCode from "qrcode"
import * as QrPng from "../../src/QrPng.js"

// jsqr's types declare an ES default export on a CommonJS module: under NodeNext the default import is
// typed as the module, but at run time it is the function itself.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default

const PngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

const merchant: QrScheme.Merchant = {
  id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  name: "Bappa Café",
  city: "Malé",
  mcc: "5812"
}
const qrid = "LQ0123456789ABCDEFGHJKMN"

const ascii = Either.getOrThrow(
  QrScheme.build({ type: "STATIC", qrid, merchant, outletId: 7, outletLabel: "Hulhumale" })
)
/** A dynamic code with the language template: the merchant's name and city in Thaana, as UTF-8. */
const thaana = Either.getOrThrow(
  QrScheme.build({
    type: "DYNAMIC",
    qrid,
    merchant: { ...merchant, nameLocal: "ބައްޕަ ކެފޭ", cityLocal: "މާލެ" },
    outletId: 7,
    outletLabel: "Hulhumale",
    amount: 12_550
  })
)

/**
 * A payload as long as EMV allows (512 characters), mostly Thaana, so about a kilobyte of UTF-8: the
 * densest symbol the scheme can ask for. Built with `Emv.encode` from our fields plus unreserved
 * templates (80-99) filled until the next one would not fit.
 */
const longest = (() => {
  const base = Either.getOrThrow(
    QrScheme.fields({ type: "STATIC", qrid, merchant, outletId: 7, outletLabel: "Hulhumale" })
  )
  const text = "ދިވެހިރާއްޖޭގެ ޤައުމީ ކިއުއާރް ކޯޑު "
  const filler = (n: number) => Array.from({ length: n }, (_, i) => text[i % text.length]).join("")
  let fields: Emv.Fields = base
  for (let tag = 80; tag <= 99; tag++) {
    const next = [...fields, { tag: String(tag), value: [{ tag: "00", value: filler(90) }] }]
    if (Either.isLeft(Emv.encode(next))) break
    fields = next
  }
  // Top up with one shorter template to land on exactly 512 characters.
  const room = Emv.MaxPayloadLength - Emv.length(Either.getOrThrow(Emv.encode(fields)))
  const tag = String(80 + fields.length - base.length)
  if (room > 8) fields = [...fields, { tag, value: [{ tag: "00", value: filler(room - 8) }] }]
  return Either.getOrThrow(Emv.encode(fields))
})()

/** Reads the PNG with pngjs and the symbol with jsQR; fails the test when either cannot. */
const decode = (png: Uint8Array) => {
  const image = PNG.sync.read(Buffer.from(png))
  const symbol = jsQR(new Uint8ClampedArray(image.data), image.width, image.height)
  if (symbol === null) throw new Error("jsQR found no QR code in the PNG")
  return {
    width: image.width,
    height: image.height,
    // jsQR turns each byte-mode segment into text with `decodeURIComponent`, i.e. as UTF-8, and drops a
    // segment that is not valid UTF-8 instead of failing. So the text alone could hide a mangled segment:
    // the raw bytes are decoded too, strictly, and both must give the payload.
    text: symbol.data,
    bytesAsUtf8: new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(symbol.binaryData)),
    version: symbol.version
  }
}

describe("QrPng", () => {
  it("the payloads under test are what they claim to be", () => {
    expect(ascii).toMatch(/^[\x20-\x7e]+$/)
    expect(thaana).toContain("0111ބައްޕަ ކެފޭ")
    expect(new TextEncoder().encode(thaana).length).toBeGreaterThan(Emv.length(thaana))
    expect(Emv.length(longest)).toBe(Emv.MaxPayloadLength)
    expect(new TextEncoder().encode(longest).length).toBeGreaterThan(750)
    for (const payload of [ascii, thaana, longest]) expect(Emv.verifyCrc(payload)).toBe(true)
  })

  for (const [name, payload] of [
    ["an ASCII static payload", ascii],
    ["a dynamic payload with the Thaana language template (UTF-8)", thaana],
    ["the longest payload EMV allows, mostly Thaana", longest]
  ] as const) {
    it.effect(`renders ${name} as a PNG that decodes to exactly the payload`, () =>
      Effect.gen(function* () {
        const png = yield* QrPng.renderPng(payload)
        expect(png).toBeInstanceOf(Uint8Array)
        expect(Buffer.isBuffer(png)).toBe(false)
        expect(Array.from(png.subarray(0, 8))).toEqual(PngSignature)
        const decoded = decode(png)
        expect(decoded.text).toBe(payload)
        expect(decoded.bytesAsUtf8).toBe(payload)
        // Square, roughly 300-400 pixels, a whole number of pixels per module (4 modules of quiet zone).
        expect(decoded.height).toBe(decoded.width)
        expect(decoded.width).toBeGreaterThanOrEqual(QrPng.MinWidth)
        expect(decoded.width).toBeLessThanOrEqual(400)
        const modules = 17 + 4 * decoded.version + 2 * QrPng.Margin
        expect(decoded.width % modules).toBe(0)
        expect(decoded.width / modules).toBe(QrPng.scaleFor(modules - 2 * QrPng.Margin))
      })
    )
  }

  it.effect("uses error correction level M and renders the same bytes every time", () =>
    Effect.gen(function* () {
      const png = yield* QrPng.renderPng(ascii)
      expect(yield* QrPng.renderPng(ascii)).toEqual(png)
      // The error correction level is in the format information; jsQR does not report it, so compare
      // with the symbol sizes of level M and of level L for this payload.
      const sizeAt = (errorCorrectionLevel: "L" | "M") =>
        QRCode.create(ascii, { errorCorrectionLevel }).modules.size
      expect(sizeAt("M")).not.toBe(sizeAt("L"))
      expect(decode(png).version).toBe((sizeAt("M") - 17) / 4)
    })
  )

  it.effect("a payload the library cannot render is ServiceUnavailable, not a defect", () =>
    Effect.gen(function* () {
      for (const payload of ["x".repeat(3_000), ""]) {
        const error = yield* Effect.flip(QrPng.renderPng(payload))
        expect(error).toBeInstanceOf(Errors.ServiceUnavailable)
        expect(error.message).toBe("The QR image could not be rendered")
        expect(error.cause).toBeInstanceOf(Error)
      }
    })
  )

  it.effect("layer provides the QrImages port", () =>
    Effect.gen(function* () {
      const images = yield* QrImages.QrImages
      expect(decode(yield* images.renderPng(thaana)).text).toBe(thaana)
    }).pipe(Effect.provide(QrPng.layer))
  )
})
