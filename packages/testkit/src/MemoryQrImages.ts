/**
 * `QrImages` renderers that draw nothing, for the memory world and for tests.
 *
 * **Not a PNG.** `placeholder` returns the payload's UTF-8 bytes: a placeholder for hosts that render
 * images themselves. Drawing a QR symbol is outside the library's domain, so the testkit does not depend
 * on a QR library; the server renders real PNGs with its `QrPng` renderer, and a host that serves
 * `imageUrl` brings its own (pass it as `Testkit.layer({ renderer })`). Never serve these bytes as
 * `image/png`.
 */
import { Errors, QrImages } from "@laari/core"
import { Effect, Layer } from "effect"

/** The bytes `placeholder` returns for `payload`: its UTF-8 encoding. Not a PNG. */
export const placeholderBytes = (payload: string): Uint8Array => new TextEncoder().encode(payload)

/** Not a PNG: the payload's UTF-8 bytes, a placeholder for hosts that render images themselves. */
export const placeholder: QrImages.QrImagesService = {
  renderPng: (payload) => Effect.sync(() => placeholderBytes(payload))
}

/** Not a PNG: see `placeholder`. The renderer `Testkit.layer` uses when given none. */
export const layer: Layer.Layer<QrImages.QrImages> = Layer.succeed(QrImages.QrImages, placeholder)

/** A renderer that always fails as a real one does when it cannot draw: `ServiceUnavailable`. */
export const failing: QrImages.QrImagesService = {
  renderPng: () =>
    Effect.fail(new Errors.ServiceUnavailable({ message: "The QR image could not be rendered" }))
}

export const layerFailing: Layer.Layer<QrImages.QrImages> = Layer.succeed(QrImages.QrImages, failing)
