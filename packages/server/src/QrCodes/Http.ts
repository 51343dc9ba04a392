/**
 * Handlers of the QR code endpoints and the hosted PNG.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Auth, QrCodes } from "@laari/core"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ServerConfigTag } from "../Config.js"
import { page } from "../Http/Fields.js"
import { idempotent } from "../Http/Idempotent.js"
import * as Problems from "../Http/Problems.js"
import { withScope } from "../Http/Security.js"
import { type CreateQrCode, QrCodesApi } from "./Api.js"
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

export const QrCodesLive = HttpApiBuilder.group(Api, "qrCodes", (handlers) =>
  Effect.gen(function* () {
    const qrCodes = yield* QrCodes.QrCodes
    const config = yield* ServerConfigTag
    return handlers
      .handle("create", ({ headers, payload }) =>
        withScope("qr:write", (principal) =>
          idempotent(
            QrCodesApi.endpoints.create,
            { principal, key: headers["idempotency-key"], payload },
            qrCodes
              .create(Auth.tenantOf(principal), toRequest(payload))
              .pipe(Effect.map((c) => Json.qrCode(c, config.baseUrl)))
          )
        )
      )
      .handle("get", ({ path }) =>
        withScope("qr:write", (principal) =>
          qrCodes
            .get(Auth.tenantOf(principal), path.id)
            .pipe(Effect.map((c) => Json.qrCode(c, config.baseUrl)))
        )
      )
      .handle("list", ({ urlParams }) =>
        withScope("qr:write", (principal) =>
          qrCodes
            .list(Auth.tenantOf(principal), {
              outletId: urlParams.outlet_id,
              type: urlParams.type,
              ...page(urlParams)
            })
            .pipe(Effect.map((list) => list.map((c) => Json.qrCode(c, config.baseUrl))))
        )
      )
      .handle("deactivate", ({ headers, path }) =>
        withScope("qr:write", (principal) =>
          idempotent(
            QrCodesApi.endpoints.deactivate,
            { principal, key: headers["idempotency-key"], payload: undefined },
            qrCodes.deactivate(Auth.tenantOf(principal), path.id).pipe(Effect.map(Json.deactivated))
          )
        )
      )
  })
)

/** A year: a code's image never changes. */
const ImageCacheControl = "public, max-age=31536000, immutable"

export const QrImagesLive = HttpApiBuilder.group(Api, "qrImages", (handlers) =>
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
