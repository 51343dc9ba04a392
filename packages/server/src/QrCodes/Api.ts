/**
 * The QR code endpoints of spec 4.2, and the hosted PNG of static codes.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Fields, QrCode } from "@laari/core"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { Body, optionalNullable, Paging, Text } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"

export const QrCodeRead = Schema.Struct({
  id: Text,
  type: QrCode.Type,
  status: QrCode.Status,
  outletId: Text,
  title: Text,
  description: Schema.NullOr(Text),
  amount: Schema.NullOr(Schema.Int),
  payload: Text,
  qrid: Text,
  imageUrl: Schema.NullOr(Text),
  reference: Text,
  expiresAt: Schema.NullOr(Text),
  createdAt: Text
}).annotations({ identifier: "QrCode" })

export const QrCodeDeactivated = Schema.Struct({
  id: Text,
  status: QrCode.Status,
  type: QrCode.Type
})

export const CreateQrCode = Body({
  outlet_id: Schema.Int,
  type: Schema.optional(QrCode.Type),
  amount: optionalNullable(QrCode.Amount),
  expires_in_minutes: optionalNullable(QrCode.ExpiresInMinutes),
  title: optionalNullable(Fields.Title),
  description: optionalNullable(Fields.Description),
  reference: optionalNullable(Fields.Reference)
})

const IdPath = Schema.Struct({
  id: Text.annotations({ description: "The code's id or its reference" })
})

export class QrCodesApi extends HttpApiGroup.make("qrCodes")
  .add(
    HttpApiEndpoint.post("create", "/qr-codes")
      .setPayload(CreateQrCode)
      .setHeaders(Doc.IdempotencyHeaders)
      .addSuccess(QrCodeRead, { status: 201 })
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .addError(Doc.Unprocessable)
      .addError(Doc.Unavailable)
      .annotate(OpenApi.Summary, "Create a static or dynamic QR code for an outlet (scope qr:write)")
  )
  .add(
    HttpApiEndpoint.get("get", "/qr-codes/:id")
      .setPath(IdPath)
      .addSuccess(QrCodeRead)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .annotate(OpenApi.Summary, "Fetch a QR code by id or reference (scope qr:write)")
  )
  .add(
    HttpApiEndpoint.get("list", "/qr-codes")
      .setUrlParams(
        Schema.Struct({
          outlet_id: Schema.optional(Schema.NumberFromString.pipe(Schema.int())),
          type: Schema.optional(QrCode.Type),
          ...Paging
        })
      )
      .addSuccess(Schema.Array(QrCodeRead))
      .addError(Doc.Forbidden)
      .addError(Doc.Unprocessable)
      .annotate(OpenApi.Summary, "List QR codes, newest first (scope qr:write)")
  )
  .add(
    HttpApiEndpoint.post("deactivate", "/qr-codes/:id/deactivate")
      .setPath(IdPath)
      .setHeaders(Doc.IdempotencyHeaders)
      .addSuccess(QrCodeDeactivated)
      .addError(Doc.BadRequest)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .annotate(OpenApi.Summary, "Deactivate a QR code; it is kept, INACTIVE (scope qr:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "QR codes") {}

/** The hosted PNG of a static code: no key, as the id is unguessable. */
export class QrImagesApi extends HttpApiGroup.make("qrImages")
  .add(
    HttpApiEndpoint.get("png", "/qr/:file")
      .setPath(Schema.Struct({ file: Text.annotations({ description: "`<id>.png`" }) }))
      .addSuccess(
        HttpApiSchema.withEncoding(Schema.Uint8ArrayFromSelf, {
          kind: "Uint8Array",
          contentType: "image/png"
        })
      )
      .addError(Doc.NotFound)
      .annotate(OpenApi.Summary, "The PNG of a static QR code (imageUrl)")
  )
  .annotate(OpenApi.Title, "QR images") {}
