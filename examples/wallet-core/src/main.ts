/**
 * Starts the reference wallet core: migrates its database, listens, and prints its URL and token on
 * one line each, so an operator (or a test) can point laari at it. SIGINT and SIGTERM stop it cleanly.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as PgliteClient from "@laari/server/Sql/Pglite/PgliteClient"
import { Effect, Layer, Redacted } from "effect"
import { createServer } from "node:http"
import { Book } from "./Book.js"
import * as Config from "./Config.js"
import { app } from "./Http.js"
import { migrate } from "./Schema.js"

let config: Config.Config
try {
  config = Config.fromEnv(process.env)
} catch (e) {
  console.error(`wallet-core: ${(e as Error).message}`)
  process.exit(78)
}

const database = config.databaseUrl
  ? PgClient.layer({ url: Redacted.make(config.databaseUrl) })
  : PgliteClient.layer({ dataDir: config.dataDir })

const announce = Layer.effectDiscard(
  HttpServer.addressWith((address) =>
    Effect.sync(() => {
      const url = address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}` : address.path
      const where = config.databaseUrl ? "PostgreSQL" : `PGlite in ${config.dataDir}`
      const faults = Object.entries(config.faults).filter(([, on]) => on)
      console.log(`wallet-core listening on ${url} (${where})`)
      console.log(`WALLET_CORE_URL=${url}`)
      console.log(`WALLET_CORE_TOKEN=${config.tokenGenerated ? config.token : "(as set)"}`)
      if (faults.length > 0) console.log(`TEST-ONLY FAULTS ON: ${faults.map(([name]) => name).join(", ")}`)
    })
  )
)

const main = HttpServer.serve(app(config.token)).pipe(
  Layer.merge(announce),
  Layer.provide(NodeHttpServer.layer(createServer, { port: config.port, host: config.host })),
  Layer.provide(Layer.effectDiscard(migrate).pipe(Layer.provideMerge(Book.layer(config.faults)))),
  Layer.provide(database)
)

NodeRuntime.runMain(Layer.launch(main))
