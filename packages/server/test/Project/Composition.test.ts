/**
 * The composed server, as `Server.appLayer` wires it: its one list of background jobs reaches the
 * workers and the clock whole (each job once, the notices' only with `LAARI_NOTIFY_URL`), and its
 * `Notifications` port is the one the configuration picks: kept in laari, and with a notification
 * service also queued in the outbox for it. A layer that dropped a job, or a port provided in the wrong
 * order, fails here.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import * as SqlClient from "@effect/sql/SqlClient"
import { DateTime, Effect, Layer, ManagedRuntime } from "effect"
import { type Ids, Notifications, PeopleNotices, Work } from "@laari/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Config from "../../src/Platform/Config.js"
import * as Edge from "../../src/Http/Edge.js"
import * as Server from "../../src/Server.js"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

const engineJobs = ["mandate-expiry", "checkout-expiry", "renewals", "code-redaction", "wallet-resolver"]

const compose = (config: Partial<Config.ServerConfig>) => {
  const full: Config.ServerConfig = {
    port: 0,
    databaseUrl: undefined,
    dataDir: undefined,
    baseUrl: "http://laari.test",
    checkoutUrl: "http://pay.laari.test",
    opsToken: TestServer.OpsToken,
    // Nothing polls on a manual clock: the outbox keeps what was queued for the test to read.
    clock: "manual",
    maxBodyBytes: Config.defaults.maxBodyBytes,
    rateLimit: 0,
    webhookAllowPrivate: true,
    ...config
  }
  return ManagedRuntime.make(
    Server.appLayer(full).pipe(
      Layer.provideMerge(
        NodeHttpServer.layer(() => Edge.createServer({ maxBodyBytes: full.maxBodyBytes }), { port: 0 })
      )
    )
  )
}

type Runtime = ReturnType<typeof compose>

const jobNames = (runtime: Runtime) =>
  runtime.runPromise(Effect.map(Work.Jobs, (jobs) => jobs.map((job) => job.name)))

/** Sends a notice to a customer of a new merchant through the port; how many rows it left in each table. */
const sendNotice = async (runtime: Runtime) => {
  const baseUrl = await runtime.runPromise(
    Effect.gen(function* () {
      const server = yield* HttpServer.HttpServer
      return server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : ""
    })
  )
  await F.merchant({ ...TestServer.client(baseUrl), close: () => runtime.dispose() })
  const id = `composition:${crypto.randomUUID()}`
  return runtime.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [customer] = yield* sql<{ readonly id: Ids.CustomerId }>`SELECT id FROM customers LIMIT 1`
      const notifications = yield* Notifications.Notifications
      yield* notifications.send({
        id,
        customerId: customer!.id,
        environment: "test",
        kind: "payment",
        title: "Paid",
        body: "A payment went through",
        data: {},
        createdAt: yield* DateTime.now
      })
      const count = (table: "notifications" | "notification_outbox") =>
        Effect.map(
          sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(table)} WHERE id = ${id}`,
          (rows) => Number(rows[0]?.n)
        )
      return { kept: yield* count("notifications"), queued: yield* count("notification_outbox") }
    })
  )
}

/** Queues an invitation's message through the port; whether its row is due to be sent. */
const inviteDue = (runtime: Runtime) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const invitationId = `inv_${crypto.randomUUID()}`
      const notices = yield* PeopleNotices.PeopleNotices
      yield* sql.withTransaction(
        notices.invitation({
          invitationId,
          merchantId: crypto.randomUUID() as Ids.MerchantId,
          merchantName: "Composition",
          email: "someone@example.mv",
          role: "viewer",
          link: "http://laari.test/dashboard/invitations/token",
          expiresAt: DateTime.unsafeMake(Date.now() + 3_600_000)
        })
      )
      const [row] = yield* sql<{ readonly due: boolean }>`
        SELECT next_attempt_at IS NOT NULL AS due FROM people_notices WHERE email = 'someone@example.mv'
        AND document LIKE ${`%${invitationId}%`}`
      return row?.due
    })
  )

describe("the composed server, with LAARI_NOTIFY_URL", () => {
  let runtime: Runtime
  beforeAll(async () => {
    runtime = compose({ notifyUrl: "http://127.0.0.1:9/notify", notifySecret: undefined })
    await runtime.runPromise(Effect.void)
  }, 120_000)
  afterAll(() => runtime?.dispose())

  it("runs every job once: the engine's, the webhook deliveries, the customer and the people's notices", async () => {
    expect(await jobNames(runtime)).toEqual([
      ...engineJobs,
      "webhook-deliveries",
      "customer-notices",
      "people-notices"
    ])
  })

  it("keeps each notice for the wallet page and queues it for the notification service", async () => {
    expect(await sendNotice(runtime)).toEqual({ kept: 1, queued: 1 })
  })

  it("queues people's notices to be sent", async () => {
    expect(await inviteDue(runtime)).toBe(true)
  })
})

describe("the composed server, without LAARI_NOTIFY_URL", () => {
  let runtime: Runtime
  beforeAll(async () => {
    runtime = compose({})
    await runtime.runPromise(Effect.void)
  }, 120_000)
  afterAll(() => runtime?.dispose())

  it("runs the engine's jobs and the webhook deliveries, and no notices' job", async () => {
    expect(await jobNames(runtime)).toEqual([...engineJobs, "webhook-deliveries"])
  })

  it("keeps each notice in laari only: the outbox stays empty", async () => {
    expect(await sendNotice(runtime)).toEqual({ kept: 1, queued: 0 })
  })

  it("keeps people's notices, to be read on a development start, and sends none", async () => {
    expect(await inviteDue(runtime)).toBe(false)
  })
})
