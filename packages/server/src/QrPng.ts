/**
 * The server's `QrImages` renderer: a QR payload as a PNG, with the `qrcode` library.
 *
 * - Error correction level M (about 15% of the symbol recoverable): L gives up too easily on a scuffed
 *   sticker, Q and H make denser symbols for a payload of up to 512 characters.
 * - A quiet zone of 4 modules, the minimum ISO/IEC 18004 asks for around the symbol.
 * - A whole number of pixels per module (so module edges stay sharp when printed or scaled), chosen so
 *   the image is at least `MinWidth` pixels: 320 to about 400 pixels for the payloads of our scheme.
 *
 * The library writes text in byte mode as UTF-8, without an ECI header, so the language template's
 * Thaana reads back exactly as it went in (`test/QrCodes/QrPng.test.ts` decodes it with an independent reader).
 */
import { Errors, QrImages } from "@laari/core"
import { Effect, Layer } from "effect"

export const ErrorCorrectionLevel = "M"
/** Modules of quiet zone on each side. */
export const Margin = 4
/** The narrowest image rendered, in pixels. */
export const MinWidth = 320

export const RenderFailedMessage = "The QR image could not be rendered"

/** Pixels per module for a symbol of `size` modules: the smallest whole number reaching `MinWidth`. */
export const scaleFor = (size: number): number => Math.max(1, Math.ceil(MinWidth / (size + 2 * Margin)))

export const renderPng = (payload: string): Effect.Effect<Uint8Array, Errors.ServiceUnavailable> =>
  Effect.tryPromise({
    try: async () => {
      // Loaded on the first image, not at start-up: the library and its PNG encoder are ~60 modules.
      const { default: QRCode } = await import("qrcode")
      const symbol = QRCode.create(payload, { errorCorrectionLevel: ErrorCorrectionLevel })
      const png = await QRCode.toBuffer(payload, {
        type: "png",
        errorCorrectionLevel: ErrorCorrectionLevel,
        version: symbol.version,
        margin: Margin,
        scale: scaleFor(symbol.modules.size)
      })
      // A plain `Uint8Array` (a view of the Buffer's bytes), as the port promises.
      return new Uint8Array(png.buffer, png.byteOffset, png.byteLength)
    },
    catch: (cause) => new Errors.ServiceUnavailable({ message: RenderFailedMessage, cause })
  })

export const make: QrImages.QrImagesService = { renderPng }

export const layer: Layer.Layer<QrImages.QrImages> = Layer.succeed(QrImages.QrImages, make)
