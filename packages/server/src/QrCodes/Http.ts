/**
 * Handlers of the QR code endpoints and the hosted PNG.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Auth, QrCodes } from "@laari/core"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ServerConfigTag } from "../Config.js"
import { page } from "../Http/Fields.js"
import { idempotent } from "../Http/Idempotent.js"
import { message, reply, respond, run, toResponse } from "../Http/Reply.js"
import { withScope } from "../Http/Security.js"
import type { CreateQrCode } from "./Api.js"
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
      .handle("create", ({ payload }) =>
        withScope("qr:write", (principal) =>
          idempotent(
            principal,
            payload,
            run(qrCodes.create(Auth.tenantOf(principal), toRequest(payload)), (c) =>
              reply(201, Json.qrCode(c, config.baseUrl))
            )
          )
        )
      )
      .handle("get", ({ path }) =>
        withScope("qr:write", (principal) =>
          respond(qrCodes.get(Auth.tenantOf(principal), path.id), (c) =>
            reply(200, Json.qrCode(c, config.baseUrl))
          )
        )
      )
      .handle("list", ({ urlParams }) =>
        withScope("qr:write", (principal) =>
          respond(
            qrCodes.list(Auth.tenantOf(principal), {
              outletId: urlParams.outlet_id,
              type: urlParams.type,
              ...page(urlParams)
            }),
            (list) =>
              reply(
                200,
                list.map((c) => Json.qrCode(c, config.baseUrl))
              )
          )
        )
      )
      .handle("deactivate", ({ path }) =>
        withScope("qr:write", (principal) =>
          idempotent(
            principal,
            undefined,
            run(qrCodes.deactivate(Auth.tenantOf(principal), path.id), (c) => reply(200, Json.deactivated(c)))
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
      const notFound = toResponse(message(404, "Not found"))
      if (!path.file.endsWith(".png")) return Effect.succeed(notFound)
      return qrCodes.image(path.file.slice(0, -".png".length)).pipe(
        Effect.map((png) =>
          png === undefined
            ? notFound
            : HttpServerResponse.uint8Array(png, {
                contentType: "image/png",
                headers: { "cache-control": ImageCacheControl }
              })
        ),
        Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(toResponse(message(503, e.message))))
      )
    })
  })
)
