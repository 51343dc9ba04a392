/**
 * The standalone service: the database, the domain services on its adapters, the routes (`Routes`), the
 * workers and the clock, as one layer.
 */
import * as HttpServer from "@effect/platform/HttpServer"
// The module itself: the package's index loads every Node adapter (cluster, RPC, workers), ~0.5 s of start-up.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Background, Crypto, Engine, PeopleLive, Work } from "@laari/core"
import { Effect, Layer } from "effect"
import * as Clockwork from "./Background/Clockwork.js"
import * as Config from "./Platform/Config.js"
import * as Readiness from "./Health/Readiness.js"
import * as Edge from "./Http/Edge.js"
import * as Notify from "./Notify/Delivery.js"
import * as Credentials from "./People/Credentials.js"
import * as PeopleNotices from "./People/Notices.js"
import * as WallClock from "./Platform/WallClock.js"
import * as QrPng from "./QrPng.js"
import * as Database from "./Sql/Database.js"
import * as RateBuckets from "./Sql/RateBuckets.js"
import * as WebhookDeliveries from "./Sql/WebhookDeliveries.js"
import * as Routes from "./Routes.js"
import * as Delivery from "./Webhooks/Delivery.js"
import * as WebhookEndpoints from "./Webhooks/Endpoints.js"
import * as Sealer from "./Webhooks/Sealer.js"
import * as Workers from "./Background/Workers.js"
import * as WalletLedger from "./WalletConnector/Ledger.js"

/** The domain services over whatever adapters are below them. */
export const ServicesLive = Engine.layer.pipe(Layer.provideMerge(QrPng.layer))

/**
 * Every background job the server runs, each listed once, in the order they run: the workers poll them
 * and the manual clock runs them (`Work.Jobs` is provided from this list and nowhere else). A job of the
 * server is added here; a job of core, to `Background.engine`.
 */
export const jobs = [
  ...Background.engine,
  // The webhook deliveries, and the customer and people's notices when they leave laari (`LAARI_NOTIFY_URL`).
  Delivery.job,
  Notify.job,
  PeopleNotices.job
] as const

/** The database, the services, the background jobs and the clock: what requests and workers use. */
const coreLayer = (config: Config.ServerConfig, readiness: Layer.Layer<Readiness.Readiness>) => {
  const base = Layer.mergeAll(
    // Its notices kept in laari, and queued for the notification service too with `LAARI_NOTIFY_URL`.
    Database.layer({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, notifyUrl: config.notifyUrl }),
    Crypto.layerWeb,
    WallClock.layer,
    Config.layer(config),
    readiness
  )
  // The rate limits, shared in the database with `DATABASE_URL`.
  const limited = RateBuckets.layer.pipe(Layer.provideMerge(base))
  // The delivery log, beside the database's other ports; and the wallet provider's core, when configured.
  // The master keys' sealer, once: webhook secrets and people's TOTP secrets are sealed by it.
  const engine = ServicesLive.pipe(
    Layer.provideMerge(WebhookDeliveries.deliveriesLayer),
    Layer.provideMerge(WalletLedger.connectorLayer(config.walletConnector)),
    Layer.provideMerge(PeopleNotices.configuredLayer(config)),
    Layer.provideMerge(Sealer.layer),
    Layer.provideMerge(limited)
  )
  // People's accounts and sessions, on the engine's stores and audit log, with the server's credentials.
  const services = PeopleLive.layer.pipe(Layer.provide(Credentials.layer), Layer.provideMerge(engine))
  // What the server's own jobs run on: the webhook deliveries and the notices' channels.
  const dispatchers = Layer.mergeAll(
    Delivery.layer().pipe(Layer.provideMerge(WebhookEndpoints.layer)),
    Notify.layer(config),
    PeopleNotices.deliveryLayer(config)
  )
  return Clockwork.layer.pipe(
    Layer.provideMerge(Work.layer(jobs)),
    Layer.provideMerge(dispatchers),
    Layer.provideMerge(services)
  )
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

/** The routes (`Routes`), served on the `HttpServer` below them, and the workers. */
const ServingLive = Layer.mergeAll(
  Routes.layer,
  afterReady(Layer.mergeAll(Workers.layer, Delivery.worker, Notify.worker, PeopleNotices.worker))
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
