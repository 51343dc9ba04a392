/**
 * The standalone service: the database, the domain services on its adapters, the HTTP API, the workers
 * and the clock, as one layer.
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import {
  Approvals,
  Background,
  Billing,
  Checkout,
  Crypto,
  Mandates,
  QrCodes,
  Subscriptions
} from "@laari/core"
import { Layer } from "effect"
import { createServer } from "node:http"
import { Api } from "./Api.js"
import { ApprovalsLive } from "./Approvals/Http.js"
import { CheckoutLive } from "./Checkout/Http.js"
import * as Clockwork from "./Clockwork.js"
import * as Config from "./Config.js"
import { HealthLive } from "./Health/Http.js"
import { ErrorMapping } from "./Http/Middleware.js"
import { AuthenticationLive, OpsAuthenticationLive } from "./Http/Security.js"
import { MandatesLive } from "./Mandates/Http.js"
import { OpsLive } from "./Ops/Http.js"
import * as QrPng from "./QrPng.js"
import { QrCodesLive, QrImagesLive } from "./QrCodes/Http.js"
import * as Database from "./Sql/Database.js"
import { SubscriptionsLive } from "./Subscriptions/Http.js"
import { TestHelpersLive } from "./TestHelpers/Http.js"
import * as Workers from "./Workers.js"

/** The domain services over whatever adapters are below them. */
export const ServicesLive = Layer.mergeAll(
  Mandates.Mandates.Default,
  QrCodes.QrCodes.Default,
  Checkout.Checkout.Default,
  Billing.Billing.Default
).pipe(
  Layer.provideMerge(Subscriptions.Subscriptions.Default),
  Layer.provideMerge(Approvals.Approvals.Default),
  Layer.provideMerge(QrPng.layer)
)

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([
    MandatesLive,
    QrCodesLive,
    QrImagesLive,
    CheckoutLive,
    SubscriptionsLive,
    ApprovalsLive,
    OpsLive,
    TestHelpersLive,
    HealthLive
  ]),
  Layer.provide([ErrorMapping, AuthenticationLive, OpsAuthenticationLive])
)

/** Everything but the listening socket: tests put `NodeHttpServer.layerTest` under it. */
export const appLayer = (config: Config.ServerConfig) => {
  const base = Layer.mergeAll(
    Database.layer({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }),
    Crypto.layerWeb,
    Config.layer(config)
  )
  const services = ServicesLive.pipe(Layer.provideMerge(base))
  const clock = Clockwork.layer.pipe(Layer.provideMerge(Background.jobs), Layer.provideMerge(services))
  const http = HttpApiBuilder.serve().pipe(
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
    Layer.provide(ApiLive)
  )
  return Layer.mergeAll(http, Workers.layer).pipe(Layer.provideMerge(clock))
}

/** The service listening on `config.port`. */
export const layer = (config: Config.ServerConfig) =>
  appLayer(config).pipe(
    HttpServer.withLogAddress,
    Layer.provide(NodeHttpServer.layer(createServer, { port: config.port }))
  )
