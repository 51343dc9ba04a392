/**
 * The QR code endpoints (`/qr-codes`), and the hosted PNG of static codes.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Fields, QrCode } from "@laari/core"
import { Schema } from "effect"
import { Body, IdOrReference, optionalNullable, Paging, Text, TextUpTo, Timestamp } from "../Http/Fields.js"
import * as Idempotent from "../Http/Idempotent.js"
import * as QrCodesProblems from "./Problems.js"
import * as Problems from "../Http/Problems.js"
import * as Declare from "../Http/Declare.js"
import * as Access from "../Http/Access.js"

/** A QR code's id. */
const QrCodeId = Schema.UUID.annotations({ description: "The QR code's id (a UUID)" })

export const QrCodeRead = Schema.Struct({
  id: QrCodeId,
  type: QrCode.Type,
  status: QrCode.Status,
  outletId: Text.annotations({ description: "The outlet's number, as a string" }),
  title: Text.annotations({
    description: "Shown to the customer in the wallet app; the outlet's name unless one was sent"
  }),
  description: Schema.NullOr(Text).annotations({
    description: "The merchant's note on the code; `null` if none was sent"
  }),
  amount: Schema.NullOr(QrCode.Amount),
  payload: Text.annotations({ description: "The EMV payload the image encodes" }),
  qrid: Text.annotations({ description: "The scheme's reference of the code" }),
  imageUrl: Schema.NullOr(Text).annotations({ description: "The PNG of a static code; no key needed" }),
  reference: Fields.Reference,
  expiresAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
}).annotations({
  identifier: "QrCode",
  description: "A national-scheme QR code of one of the merchant's outlets"
})

export const QrCodeDeactivated = Schema.Struct({
  id: QrCodeId,
  status: QrCode.Status,
  type: QrCode.Type
}).annotations({ identifier: "QrCodeDeactivated" })

export const CreateQrCode = Body({
  outlet_id: Schema.Number.pipe(
    Schema.int(),
    Schema.positive({ message: () => "must be a positive whole number" })
  ).annotations({
    description: "One of the merchant's outlets"
  }),
  type: Schema.optional(QrCode.Type).annotations({ description: "`STATIC` (default) or `DYNAMIC`" }),
  amount: optionalNullable(QrCode.Amount).annotations({
    description: "Required for a `DYNAMIC` code, not allowed for a `STATIC` one"
  }),
  expires_in_minutes: optionalNullable(QrCode.ExpiresInMinutes),
  title: optionalNullable(Fields.Title),
  description: optionalNullable(Fields.Description),
  reference: optionalNullable(Fields.Reference)
}).annotations({
  examples: [
    {
      outlet_id: 1,
      type: "DYNAMIC",
      amount: 12_550,
      expires_in_minutes: 10,
      title: "Table 4",
      reference: "bill-8812"
    },
    { outlet_id: 1, type: "STATIC", title: "Counter", reference: "counter-1" }
  ]
})

const IdPath = IdOrReference("QR code")

/** The URL parameters of the list, which the GraphQL read API takes as its arguments too. */
export const ListParams = Schema.Struct({
  outlet_id: Schema.optional(
    Schema.NumberFromString.pipe(Schema.int(), Schema.positive()).annotations({
      jsonSchema: { type: "integer", minimum: 1, description: "Only this outlet's codes" }
    })
  ),
  type: Schema.optional(QrCode.Type).annotations({ description: "Only codes of this type" }),
  ...Paging
})

export class QrCodesApi extends HttpApiGroup.make("qrCodes")
  .add(
    Idempotent.post("create", "/qr-codes")
      .setPayload(CreateQrCode)
      .addSuccess(QrCodeRead, { status: 201 })
      .addError(QrCodesProblems.OutletNotFound)
      .addError(QrCodesProblems.QrReferenceTaken)
      .annotate(OpenApi.Summary, "Create a QR code")
      .annotate(
        OpenApi.Description,
        "A `STATIC` code (the customer types the amount; its PNG is rendered and served at `imageUrl`) or a `DYNAMIC` one carrying `amount` and payable once for 1 to 15 minutes."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/qr-codes/:id")
      .setPath(IdPath)
      .addSuccess(QrCodeRead)
      .addError(QrCodesProblems.QrCodeNotFound)
      .annotate(OpenApi.Summary, "Fetch a QR code")
      .annotate(OpenApi.Description, "By id or by the merchant's reference.")
  )
  .add(
    HttpApiEndpoint.get("list", "/qr-codes")
      .setUrlParams(ListParams)
      .addSuccess(Schema.Array(QrCodeRead))
      .annotate(OpenApi.Summary, "List QR codes")
      .annotate(OpenApi.Description, "Newest first, optionally by outlet or type.")
  )
  .add(
    Idempotent.post("deactivate", "/qr-codes/:id/deactivate")
      .setPath(IdPath)
      .addSuccess(QrCodeDeactivated)
      .addError(QrCodesProblems.QrCodeNotFound)
      .addError(QrCodesProblems.QrCodeAlreadyInactive)
      .annotate(OpenApi.Summary, "Deactivate a QR code")
      .annotate(OpenApi.Description, "The code is kept, `INACTIVE`, and can no longer be paid.")
  )
  .pipe(
    Declare.merchant({
      access: Access.scoped("qr:write"),
      title: "QR codes",
      description: "Codes of the national QR scheme for the merchant's outlets"
    })
  ) {}

/** The hosted PNG of a static code: no key, as the id is unguessable. */
export class QrImagesApi extends HttpApiGroup.make("qrImages")
  .add(
    HttpApiEndpoint.get("png", "/qr/:file")
      .setPath(Schema.Struct({ file: TextUpTo(64).annotations({ description: "`<id>.png`" }) }))
      .addSuccess(
        HttpApiSchema.withEncoding(Schema.Uint8ArrayFromSelf, {
          kind: "Uint8Array",
          contentType: "image/png"
        })
      )
      .addError(Problems.NotFoundProblem)
      .addError(Problems.InvalidRequest)
      .addError(Problems.ServiceUnavailable)
      .annotate(OpenApi.Summary, "The PNG of a static QR code")
      .annotate(
        OpenApi.Description,
        "Served at a static code's `imageUrl` without a key: the id is unguessable."
      )
  )
  .annotate(Access.Access, Access.anyone)
  .annotate(OpenApi.Title, "QR images")
  .annotate(OpenApi.Description, "Images of static codes, to print or show") {}
