/**
 * Every route of the service, assembled here and only here: the HTTP API's handlers, its errors' edge
 * (`Http/Middleware`), its documents and reference page, OAuth, GraphQL, `/metrics` and the pages. `Http/`
 * holds the mechanics and names no feature; this module binds them to the features, so no feature folder
 * and `Http/` import each other both ways.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as OpenApi from "@effect/platform/OpenApi"
import { EventType } from "@laari/core"
import { Effect, Layer } from "effect"
import * as Operation from "./Http/Operation.js"
import { Api } from "./Api.js"
import { ApprovalsLive } from "./Approvals/Http.js"
import { BalanceLive } from "./Balance/Http.js"
import { CheckoutLive } from "./Checkout/Http.js"
import { ServerConfigTag } from "./Platform/Config.js"
import * as GraphQLHttp from "./GraphQL/Http.js"
import { HealthLive } from "./Health/Http.js"
import * as Challenge from "./Http/Challenge.js"
import * as Docs from "./Http/Docs.js"
import * as MetricsHttp from "./Observability/MetricsHttp.js"
import * as Middleware from "./Http/Middleware.js"
import * as OpenApiDocument from "./Http/OpenApiDocument.js"
import * as Problems from "./Http/Problems.js"
import { AddressRateLimitLive } from "./Http/RateLimit.js"
import * as RequestId from "./Http/RequestId.js"
import * as RetryAfter from "./Http/RetryAfter.js"
import * as Access from "./Http/Access.js"
import { authenticationLive, OpsAuthenticationLive } from "./Http/Security.js"
import { MandatesLive } from "./Mandates/Http.js"
import * as Metrics from "./Observability/Metrics.js"
import * as OAuthHttp from "./OAuth/Http.js"
import { OpsApi } from "./Ops/Api.js"
import { OpsLive } from "./Ops/Http.js"
import { OpsUsersApi } from "./Ops/UsersApi.js"
import { OpsUsersLive } from "./Ops/UsersHttp.js"
import * as CustomerPages from "./Pages/Customer.js"
import * as ConsolePages from "./Pages/Console.js"
import * as DashboardPages from "./Pages/Dashboard.js"
import * as HomePage from "./Pages/Home.js"
import * as Paths from "./Pages/Paths.js"
import * as PagesRequest from "./Pages/Request.js"
import * as WalletPages from "./Pages/Wallet.js"
import { QrCodesLive, QrImagesLive } from "./QrCodes/Http.js"
import { OpsAuditApi } from "./Audit/Api.js"
import { AuditLive, OpsAuditLive } from "./Audit/Http.js"
import { ReconciliationApi } from "./Reconciliation/Api.js"
import { ReconciliationLive } from "./Reconciliation/Http.js"
import { RefundsLive } from "./Refunds/Http.js"
import { SubscriptionsLive } from "./Subscriptions/Http.js"
import { TestHelpersLive } from "./TestHelpers/Http.js"
import { OpsWebhooksApi } from "./Webhooks/Api.js"
import { WalletConnectorApi } from "./WalletConnector/Api.js"
import * as Reconcile from "./WalletConnector/Reconcile.js"
import { EventsLive, OpsWebhooksLive, WebhookEndpointsLive } from "./Webhooks/Http.js"

/** The operator API alone; the main `Api` excludes the group from its document. */
export class OpsDocumentApi extends HttpApi.make("laari-operator")
  .add(OpsApi.annotate(OpenApi.Exclude, false))
  .add(OpsUsersApi.annotate(OpenApi.Exclude, false))
  .add(OpsWebhooksApi.annotate(OpenApi.Exclude, false))
  .add(ReconciliationApi.annotate(OpenApi.Exclude, false))
  .add(OpsAuditApi.annotate(OpenApi.Exclude, false))
  // As on the main `Api`: an empty or dot path parameter matches no route, answered `NOT_FOUND`.
  .addError(Problems.NotFoundProblem)
  .annotate(OpenApi.Title, "laari operator API")
  .annotate(OpenApi.Version, EventType.ApiVersion)
  .annotate(OpenApi.Transform, OpenApiDocument.finish({ internal: true }))
  .annotate(
    OpenApi.Description,
    "Merchants, outlets, keys, feature gates, people (team members and staff), customers, suspensions, recorded events, the manual clock and the reconciliation of a day against the wallet provider's core. Authenticate with `Authorization: Bearer <LAARI_OPS_TOKEN>`. Not part of the merchant API's contract."
  ) {}

/** The edges of every API request (`Http/Middleware`), told which routes read their own bodies. */
const ErrorMapping = HttpApiBuilder.middleware(
  Api,
  Effect.map(ServerConfigTag, ({ maxBodyBytes, checkoutUrl, baseUrl }) =>
    Middleware.mapErrors({
      maxBodyBytes,
      own: {
        // OAuth's and GraphQL's endpoints answer every body themselves, as their specifications say.
        anyBody: (pathname) => OAuthHttp.isOAuthPath(pathname) || pathname === GraphQLHttp.Path,
        // The pages read their forms themselves.
        forms: Paths.isPage({ checkoutUrl, baseUrl })
      }
    })
  )
)

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([
    Layer.unwrapEffect(Effect.map(MandatesLive, (spec) => Operation.mount(Api, spec))),
    Operation.mount(Api, QrCodesLive),
    Operation.mount(Api, QrImagesLive),
    Operation.mount(Api, CheckoutLive),
    Operation.mount(Api, SubscriptionsLive),
    Layer.unwrapEffect(Effect.map(RefundsLive, (spec) => Operation.mount(Api, spec))),
    Operation.mount(Api, BalanceLive),
    Operation.mount(Api, AuditLive),
    Operation.mount(Api, OpsAuditLive),
    Operation.mount(Api, ApprovalsLive),
    Operation.mount(Api, OpsLive),
    Operation.mount(Api, OpsUsersLive),
    Layer.unwrapEffect(Effect.map(TestHelpersLive, (spec) => Operation.mount(Api, spec))),
    Layer.unwrapEffect(Effect.map(WebhookEndpointsLive, (spec) => Operation.mount(Api, spec))),
    Operation.mount(Api, EventsLive),
    Operation.mount(Api, OpsWebhooksLive),
    Operation.mount(Api, ReconciliationLive).pipe(Layer.provide(Reconcile.serverLayer)),
    Operation.mount(Api, HealthLive)
  ]),
  Layer.provide([
    ErrorMapping,
    authenticationLive(Access.rules(Api)),
    OpsAuthenticationLive,
    AddressRateLimitLive
  ])
)

/** The HTTP app, served on the `HttpServer` below it. */
export const layer = HttpApiBuilder.serve((app) =>
  RequestId.middleware(RetryAfter.middleware(MetricsHttp.middleware(Challenge.middleware(app))))
).pipe(
  Layer.provide(Docs.apiDocument),
  Layer.provide(
    Layer.mergeAll(
      Docs.page,
      Docs.document("/ops/openapi.json", OpsDocumentApi),
      // The protocol a wallet provider's core serves for laari, published for the provider's engineers.
      Docs.document("/wallet-connector/openapi.json", WalletConnectorApi),
      Docs.headers
    )
  ),
  // OAuth 2.0's token, revocation and metadata endpoints, kept out of the API's document.
  Layer.provide(OAuthHttp.layer),
  // The GraphQL read API, self-describing by introspection, so kept out of the API's document.
  Layer.provide(GraphQLHttp.layer),
  // `/metrics`, outside the API's document, and the request timing.
  Layer.provide(MetricsHttp.layer.pipe(Layer.provide(Metrics.layer))),
  Layer.provide(
    Layer.mergeAll(
      CustomerPages.layer,
      WalletPages.layer,
      DashboardPages.layer,
      // The operator console: people sign in; the ops token's guard is on the operator API's endpoints only.
      ConsolePages.layer,
      HomePage.layer
    ).pipe(Layer.provide(PagesRequest.layer))
  ),
  Layer.provide(ApiLive),
  // find-my-way refuses path parameters over 100 characters as unknown routes; a reference is up to
  // 255 characters (percent-encoded, up to three times that), and must reach its handler's 404.
  Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: 1024 }))
)
