/**
 * The whole HTTP API. Its OpenAPI description (`GET /openapi.json`) covers the merchant endpoints.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { Events } from "@laari/core"
import { ApprovalsApi } from "./Approvals/Api.js"
import { CheckoutApi } from "./Checkout/Api.js"
import { HealthApi } from "./Health/Api.js"
import { MandatesApi } from "./Mandates/Api.js"
import { OpsApi } from "./Ops/Api.js"
import { QrCodesApi, QrImagesApi } from "./QrCodes/Api.js"
import { SubscriptionsApi } from "./Subscriptions/Api.js"
import { TestHelpersApi } from "./TestHelpers/Api.js"

export class Api extends HttpApi.make("laari")
  .add(MandatesApi)
  .add(QrCodesApi)
  .add(QrImagesApi)
  .add(CheckoutApi)
  .add(SubscriptionsApi)
  .add(ApprovalsApi)
  .add(TestHelpersApi)
  .add(OpsApi)
  .add(HealthApi)
  .annotate(OpenApi.Title, "laari")
  .annotate(OpenApi.Version, Events.ApiVersion)
  .annotate(
    OpenApi.Description,
    "Mandates, national-scheme QR codes and subscriptions for merchants of a Maldivian wallet. Amounts are integer laari (100 laari = 1 MVR)."
  ) {}
