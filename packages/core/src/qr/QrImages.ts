/**
 * The port that renders a QR payload as a PNG. The server renders with the `qrcode` library; a host may
 * bring its own. Rendering happens inside the create transaction, so a failure keeps nothing.
 */
import { Context, type Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"

export interface QrImagesService {
  readonly renderPng: (payload: string) => Effect.Effect<Uint8Array, ServiceUnavailable>
}

export class QrImages extends Context.Tag("laari/QrImages")<QrImages, QrImagesService>() {}
