/**
 * The standalone service: the database, the domain services on its adapters, the HTTP API, the workers
 * and the clock, as one layer.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
// The module itself: the package's index loads every Node adapter (cluster, RPC, workers), ~0.5 s of start-up.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Crypto, Engine } from "@laari/core"
import { Effect, Layer } from "effect"
import { Api } from "./Api.js"
import { ApprovalsLive } from "./Approvals/Http.js"
import { CheckoutLive } from "./Checkout/Http.js"
import * as Clockwork from "./Clockwork.js"
import * as Config from "./Config.js"
import { HealthLive } from "./Health/Http.js"
import * as Readiness from "./Health/Readiness.js"
import * as Challenge from "./Http/Challenge.js"
import * as Docs from "./Http/Docs.js"
import * as GraphQLHttp from "./GraphQL/Http.js"
import * as Edge from "./Http/Edge.js"
import * as MetricsHttp from "./Http/MetricsHttp.js"
import { ErrorMapping } from "./Http/Middleware.js"
import { AddressRateLimitLive } from "./Http/RateLimit.js"
import * as RequestId from "./Http/RequestId.js"
import * as RetryAfter from "./Http/RetryAfter.js"
import { AuthenticationLive, OpsAuthenticationLive } from "./Http/Security.js"
import { MandatesLive } from "./Mandates/Http.js"
import { BalanceLive } from "./Balance/Http.js"
import * as OAuthHttp from "./OAuth/Http.js"
import * as Metrics from "./Metrics.js"
import * as Notify from "./Notify/Delivery.js"
import { OpsLive } from "./Ops/Http.js"
import * as CustomerPages from "./Pages/Customer.js"
import * as DashboardPages from "./Pages/Dashboard.js"
import * as HomePage from "./Pages/Home.js"
import * as PagesRequest from "./Pages/Request.js"
import * as WalletPages from "./Pages/Wallet.js"
import * as QrPng from "./QrPng.js"
import { QrCodesLive, QrImagesLive } from "./QrCodes/Http.js"
import { RefundsLive } from "./Refunds/Http.js"
import * as Database from "./Sql/Database.js"
import * as RateBuckets from "./Sql/RateBuckets.js"
import { SubscriptionsLive } from "./Subscriptions/Http.js"
import { TestHelpersLive } from "./TestHelpers/Http.js"
import * as Delivery from "./Webhooks/Delivery.js"
import * as WebhookEndpoints from "./Webhooks/Endpoints.js"
import { EventsLive, OpsWebhooksLive, WebhookEndpointsLive } from "./Webhooks/Http.js"
import * as WebhookSql from "./Webhooks/Sql.js"
import * as Workers from "./Workers.js"

/** The domain services over whatever adapters are below them. */
export const ServicesLive = Engine.layer.pipe(Layer.provideMerge(QrPng.layer))

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([
    MandatesLive,
    QrCodesLive,
    QrImagesLive,
    CheckoutLive,
    SubscriptionsLive,
    RefundsLive,
    BalanceLive,
    ApprovalsLive,
    OpsLive,
    TestHelpersLive,
    WebhookEndpointsLive,
    EventsLive,
    OpsWebhooksLive,
    HealthLive
  ]),
  Layer.provide([ErrorMapping, AuthenticationLive, OpsAuthenticationLive, AddressRateLimitLive])
)

/** The database, the services, the background jobs and the clock: what requests and workers use. */
const coreLayer = (config: Config.ServerConfig, readiness: Layer.Layer<Readiness.Readiness>) => {
  const base = Layer.mergeAll(
    Database.layer({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }),
    Crypto.layerWeb,
    Config.layer(config),
    readiness
  )
  // The rate limits, shared in the database with `DATABASE_URL`.
  const limited = RateBuckets.layer.pipe(Layer.provideMerge(base))
  // The notices' port (queued for the notification service too, with `LAARI_NOTIFY_URL`) over the
  // database's own, which it replaces.
  const notices = Notify.layer(config).pipe(Layer.provideMerge(limited))
  const services = ServicesLive.pipe(Layer.provideMerge(notices))
  const deliveries = Delivery.layer().pipe(
    Layer.provideMerge(WebhookEndpoints.layer),
    Layer.provideMerge(WebhookSql.layer)
  )
  // The engine's jobs, the webhook deliveries and the notices, in one list.
  const jobs = Notify.jobs.pipe(
    Layer.provide(Delivery.jobs.pipe(Layer.provide(services))),
    Layer.provideMerge(deliveries)
  )
  return Clockwork.layer.pipe(Layer.provideMerge(jobs), Layer.provideMerge(services))
}

/**
 * Background work that starts once start-up is done (`Readiness`): its first sweep of every job would
 * otherwise compete with the start-up for the one PGlite session and the CPU. At once in an embedded
 * server (`Readiness.immediate`).
 */
const afterReady = <R>(work: Layer.Layer<never, never, R>) =>
  Layer.scopedDiscard(
    Effect.flatMap(Readiness.Readiness, (readiness) =>
      Effect.forkScoped(Effect.zipRight(readiness.awaitDone, Layer.launch(work)))
    )
  )

/** The HTTP API, served on the `HttpServer` below it, and the workers. */
const ServingLive = Layer.mergeAll(
  HttpApiBuilder.serve((app) =>
    RequestId.middleware(RetryAfter.middleware(MetricsHttp.middleware(Challenge.middleware(app))))
  ).pipe(
    Layer.provide(Docs.apiDocument),
    Layer.provide(Docs.layer),
    // OAuth 2.0's token, revocation and metadata endpoints, outside the API's document (spec 9.5).
    Layer.provide(OAuthHttp.layer),
    // The GraphQL read API, self-describing by introspection (spec 9.5).
    Layer.provide(GraphQLHttp.layer),
    // `/metrics`, outside the API's document, and the request timing.
    Layer.provide(MetricsHttp.layer.pipe(Layer.provide(Metrics.layer))),
    Layer.provide(
      Layer.mergeAll(CustomerPages.layer, WalletPages.layer, DashboardPages.layer, HomePage.layer).pipe(
        Layer.provide(PagesRequest.layer)
      )
    ),
    Layer.provide(ApiLive),
    // find-my-way refuses path parameters over 100 characters as unknown routes; a reference is up to
    // 255 characters (percent-encoded, up to three times that), and must reach its handler's 404.
    Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: 1024 }))
  ),
  afterReady(Layer.mergeAll(Workers.layer, Delivery.worker, Notify.worker))
)

/** Everything but the listening socket: tests put a server under it. */
export const appLayer = (config: Config.ServerConfig) =>
  ServingLive.pipe(Layer.provideMerge(coreLayer(config, Readiness.immediate)))

/**
 * The service listening on `config.port` behind the `Edge`. Layers are built in order and released in
 * reverse: the socket opens once the database and the services are up, and closes, draining in-flight
 * requests, before they go down. `/readyz` waits for `Readiness.done`, which the caller says once
 * start-up (the seeding) is complete.
 */
export const layer = (config: Config.ServerConfig) =>
  ServingLive.pipe(
    HttpServer.withLogAddress,
    Layer.provide(
      NodeHttpServer.layer(() => Edge.createServer({ maxBodyBytes: config.maxBodyBytes }), {
        port: config.port
      })
    ),
    Layer.provideMerge(coreLayer(config, Readiness.pending))
  )
