/**
 * Handlers of the QR code endpoints and the hosted PNG.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { QrCodes } from "@laari/core"
import { Effect } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import { page } from "../Http/Fields.js"
import * as Operation from "../Http/Operation.js"
import * as Problems from "../Http/Problems.js"
import { type CreateQrCode, QrCodesApi, QrImagesApi } from "./Api.js"
import * as Json from "./Json.js"

const toRequest = (p: typeof CreateQrCode.Type) => ({
  outletId: p.outlet_id,
  type: p.type ?? "STATIC",
  amount: p.amount ?? null,
  expiresInMinutes: p.expires_in_minutes ?? null,
  title: p.title ?? null,
  description: p.description ?? null,
  reference: p.reference ?? null
})

export const QrCodesLive = Operation.handlers(QrCodesApi, (handlers) =>
  Effect.gen(function* () {
    const qrCodes = yield* QrCodes.QrCodes
    const config = yield* ServerConfigTag
    return handlers
      .handle("create", ({ payload }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) => qrCodes.create(tenant, toRequest(payload))),
          Effect.map((c) => Json.qrCode(c, config.baseUrl))
        )
      )
      .handle("get", ({ path }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) => qrCodes.get(tenant, path.id)),
          Effect.map((c) => Json.qrCode(c, config.baseUrl))
        )
      )
      .handle("list", ({ urlParams }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) =>
            qrCodes.list(tenant, { outletId: urlParams.outlet_id, type: urlParams.type, ...page(urlParams) })
          ),
          Effect.map((list) => list.map((c) => Json.qrCode(c, config.baseUrl)))
        )
      )
      .handle("deactivate", ({ path }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) => qrCodes.deactivate(tenant, path.id)),
          Effect.map(Json.deactivated)
        )
      )
  })
)

/** A year: a code's image never changes. */
const ImageCacheControl = "public, max-age=31536000, immutable"

export const QrImagesLive = Operation.handlers(QrImagesApi, (handlers) =>
  Effect.gen(function* () {
    const qrCodes = yield* QrCodes.QrCodes
    return handlers.handle("png", ({ path }) => {
      if (!path.file.endsWith(".png")) return Effect.fail(new Problems.NotFound())
      return qrCodes.image(path.file.slice(0, -".png".length)).pipe(
        Effect.flatMap((png) =>
          png === undefined
            ? Effect.fail(new Problems.NotFound())
            : Effect.succeed(
                HttpServerResponse.uint8Array(png, {
                  contentType: "image/png",
                  headers: { "cache-control": ImageCacheControl }
                })
              )
        )
      )
    })
  })
)
