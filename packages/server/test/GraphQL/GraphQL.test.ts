/**
 * The GraphQL read API over HTTP, on PGlite and (with DATABASE_URL) PostgreSQL: graphql-http's audit of
 * the GraphQL-over-HTTP specification, introspection, the same fields as the REST read shapes, scopes
 * per field group, tenancy, depth and cost limits; and, on the schema itself, lists of lists read in
 * one statement per level however many parents a page holds.
 */
import { Auth, Engine, Mandates, Store } from "@laari/core"
import { MemoryQrImages, Seed } from "@laari/testkit"
import { Effect, Layer, Runtime } from "effect"
import * as G from "graphql"
import { auditServer } from "graphql-http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Config from "../../src/Platform/Config.js"
import * as GraphQLEngine from "../../src/GraphQL/Engine.js"
import * as GraphQLSchema from "../../src/GraphQL/Schema.js"
import { MandateRead } from "../../src/Mandates/Api.js"
import * as WebhookEndpoints from "../../src/Webhooks/Endpoints.js"
import * as Sealer from "../../src/Webhooks/Sealer.js"
import * as Fixtures from "../support/Fixtures.js"
import { serverBackends } from "../support/PostgresServer.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

for (const backend of serverBackends) {
  describe.skipIf(backend.skip)(`GraphQL on ${backend.name}`, { timeout: 120_000 }, () => {
    let server: TestServer.LocalTestServer
    let merchant: Fixtures.Merchant

    beforeAll(async () => {
      server = await backend.start()
      merchant = await Fixtures.merchant(server)
    }, 120_000)
    afterAll(() => server?.close())

    const query = (key: string, source: string, variables?: Record<string, unknown>) =>
      server.request("POST", "/graphql", {
        key,
        body: { query: source, variables },
        headers: { accept: "application/graphql-response+json" }
      })

    it("passes graphql-http's audit of the GraphQL-over-HTTP specification", async () => {
      const results = await auditServer({
        url: `${server.baseUrl}/graphql`,
        fetchFn: (input: string, init?: RequestInit) =>
          fetch(input, {
            ...init,
            headers: {
              ...(init?.headers as Record<string, string>),
              authorization: `Bearer ${merchant.test}`
            }
          })
      })
      const failed = results.filter((r) => r.status === "error")
      expect(failed.map((r) => `${r.id} ${r.name}: ${"reason" in r ? r.reason : ""}`)).toEqual([])
      expect(results.filter((r) => r.status === "ok").length).toBeGreaterThan(20)
    })

    it("describes itself by introspection, with the REST read shapes' fields", async () => {
      const res = await query(merchant.test, G.getIntrospectionQuery())
      expect(res.status).toBe(200)
      const schema = G.buildClientSchema(res.body.data)
      const queryFields = Object.keys(schema.getQueryType()!.getFields()).sort()
      expect(queryFields).toEqual(
        [
          "balance",
          "balanceTransactions",
          "checkoutSession",
          "event",
          "events",
          "mandate",
          "mandates",
          "qrCode",
          "qrCodes",
          "refund",
          "refunds",
          "subscription",
          "subscriptions",
          "webhookDeliveries",
          "webhookEndpoints"
        ].sort()
      )
      expect(schema.getMutationType() ?? undefined).toBeUndefined()
      const mandate = schema.getType("Mandate") as G.GraphQLObjectType
      expect(Object.keys(mandate.getFields()).sort()).toEqual(
        [...Object.keys(MandateRead.fields), "charges"].sort()
      )
      expect(String(mandate.getFields().perChargeCap!.type)).toBe("SafeInt!")
      expect(String(mandate.getFields().periodCap!.type)).toBe("SafeInt")
      expect(String(mandate.getFields().createdAt!.type)).toBe("String!")
    })

    it("reads what REST reads, with the same values, and nested lists", async () => {
      const created = await server.request("POST", "/mandates", {
        key: merchant.test,
        body: Fixtures.mandateBody()
      })
      expect(created.status).toBe(201)
      for (const amount of [100, 200, 300])
        expect(
          (
            await server.request("POST", `/mandates/${created.body.id}/charges`, {
              key: merchant.test,
              body: { amount }
            })
          ).status
        ).toBe(201)
      const rest = await server.request("GET", `/mandates/${created.body.id}`, { key: merchant.test })
      const res = await query(
        merchant.test,
        `query($id: String!) { mandate(id: $id) { ${Object.keys(MandateRead.fields).join(" ")} charges(limit: 2) { amount } } }`,
        { id: created.body.reference }
      )
      expect(res.status).toBe(200)
      const { charges, ...fields } = res.body.data.mandate
      expect(fields).toEqual(rest.body)
      expect(charges).toEqual([{ amount: 300 }, { amount: 200 }])
      const listed = await query(merchant.test, `{ mandates(reference: "${created.body.reference}") { id } }`)
      expect(listed.body.data.mandates).toEqual([{ id: created.body.id }])
    })

    it("every root field answers what its REST endpoint answers", async () => {
      const key = merchant.test
      const get = async (path: string) => (await server.request("GET", path, { key })).body
      const qr = await server.request("POST", "/qr-codes", {
        key,
        body: {
          outlet_id: merchant.outletId,
          type: "DYNAMIC",
          title: "Table 4",
          amount: 1_500,
          reference: Fixtures.unique("qr")
        }
      })
      expect(qr.status, qr.text).toBe(201)
      const session = await server.request("POST", "/checkout/sessions", {
        key,
        body: {
          mode: "SUBSCRIPTION",
          title: "Gold plan",
          reference: Fixtures.unique("sub"),
          price_data: { name: "Gold", amount: 2_500, interval: "MONTH" }
        }
      })
      expect(session.status, session.text).toBe(200)
      expect(
        (await server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, { key }))
          .status
      ).toBe(200)
      const hook = await server.request("POST", "/webhook-endpoints", {
        key,
        body: { url: "https://example.com/laari", enabled_events: ["*"] }
      })
      expect(hook.status, hook.text).toBe(201)
      const mandate = await server.request("POST", "/mandates", { key, body: Fixtures.mandateBody() })
      const charge = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
        key,
        body: { amount: 5_000 }
      })
      const refund = await server.request("POST", "/refunds", {
        key,
        body: { charge_id: charge.body.id, amount: 1_000, reference: Fixtures.unique("refund") }
      })
      expect(refund.status, refund.text).toBe(201)

      const graph = async (source: string) => {
        const res = await query(key, source)
        expect(res.body.errors, `${source} ${JSON.stringify(res.body.errors)}`).toBeUndefined()
        return res.body.data
      }
      const fields = (schema: { fields: Record<string, unknown> }) => Object.keys(schema.fields).join(" ")
      const { QrCodeRead } = await import("../../src/QrCodes/Api.js")
      const { SubscriptionRead, InvoiceRead } = await import("../../src/Subscriptions/Api.js")
      const { SessionRead } = await import("../../src/Checkout/Api.js")
      const { WebhookEndpointRead } = await import("../../src/Webhooks/Api.js")
      const { RefundRead } = await import("../../src/Refunds/Api.js")
      const { ChargeRead } = await import("../../src/Mandates/Api.js")
      expect((await graph(`{ refunds { ${fields(RefundRead)} } }`)).refunds).toEqual(await get("/refunds"))
      expect(
        (await graph(`{ refunds(charge_id: "${charge.body.id}") { ${fields(RefundRead)} } }`)).refunds
      ).toEqual(await get(`/refunds?charge_id=${charge.body.id}`))
      expect(
        (await graph(`{ refund(id: "${refund.body.reference}") { ${fields(RefundRead)} } }`)).refund
      ).toEqual(refund.body)
      const graphCharges = (
        await graph(`{ mandate(id: "${mandate.body.id}") { charges { ${fields(ChargeRead)} } } }`)
      ).mandate.charges
      expect(graphCharges).toMatchObject([{ id: charge.body.id, amountRefunded: 1_000 }])

      // The balance and its movements, as REST reads them (the same service, the same JSON).
      const { BalanceRead, BalanceTransactionRead } = await import("../../src/Balance/Api.js")
      const movements = `data { ${fields(BalanceTransactionRead)} } hasMore`
      const money = await graph(`{ balance { ${fields(BalanceRead)} } balanceTransactions { ${movements} } }`)
      const restBalance = await get("/balance")
      expect({ ...money.balance, asOf: "" }).toEqual({ ...restBalance, asOf: "" })
      expect(money.balanceTransactions).toEqual(await get("/balance-transactions"))
      expect(money.balanceTransactions.data.map((t: { type: string }) => t.type)).toContain("refund")
      const first = money.balanceTransactions.data[0].id
      expect(
        (await graph(`{ balanceTransactions(starting_after: "${first}", limit: 2) { ${movements} } }`))
          .balanceTransactions
      ).toEqual(await get(`/balance-transactions?starting_after=${first}&limit=2`))

      expect((await graph(`{ qrCodes { ${fields(QrCodeRead)} } }`)).qrCodes).toEqual(await get("/qr-codes"))
      expect((await graph(`{ qrCode(id: "${qr.body.id}") { ${fields(QrCodeRead)} } }`)).qrCode).toEqual(
        await get(`/qr-codes/${qr.body.id}`)
      )
      expect(
        (
          await graph(
            `{ checkoutSession(id: "${session.body.id}") { ${fields(SessionRead).replace("priceData", "priceData { name amount interval intervalCount }")} } }`
          )
        ).checkoutSession
      ).toEqual(await get(`/checkout/sessions/${session.body.id}`))
      const subs =
        // Nested pages of 10: the default 25 x 25 would cost over the limit since invoices read amountRefunded.
        (
          await graph(
            `{ subscriptions { ${fields(SubscriptionRead)} invoices(limit: 10) { ${fields(InvoiceRead)} } } }`
          )
        ).subscriptions as Array<{ id: string; invoices: unknown }>
      const restSubs = (await get("/subscriptions")) as Array<{ id: string }>
      expect(subs.map(({ invoices: _, ...s }) => s)).toEqual(restSubs)
      for (const s of subs) expect(s.invoices).toEqual(await get(`/subscriptions/${s.id}/invoices`))
      const events = (await graph("{ events(limit: 100) { id type created livemode data { object } } }"))
        .events as Array<{ id: string }>
      const restEvents = (await get("/events?limit=100")) as Array<{
        id: string
        type: string
        created: number
        livemode: boolean
        data: unknown
      }>
      expect(events).toEqual(
        restEvents.map(({ id, type, created, livemode, data }) => ({ id, type, created, livemode, data }))
      )
      expect(
        (await graph(`{ webhookEndpoints { ${fields(WebhookEndpointRead)} } }`)).webhookEndpoints
      ).toEqual(await get("/webhook-endpoints"))
      expect(
        (await graph(`{ webhookDeliveries(endpoint_id: "${hook.body.id}") { id } }`)).webhookDeliveries
      ).toEqual(
        ((await get(`/webhook-endpoints/${hook.body.id}/deliveries`)) as Array<{ id: string }>).map(
          ({ id }) => ({ id })
        )
      )
    })

    it("no root field shows another merchant's objects, or another environment's", async () => {
      const owner = await Fixtures.merchant(server)
      const key = owner.test
      const mandate = await server.request("POST", "/mandates", { key, body: Fixtures.mandateBody() })
      await server.request("POST", `/mandates/${mandate.body.id}/charges`, { key, body: { amount: 100 } })
      const qr = await server.request("POST", "/qr-codes", {
        key,
        body: {
          outlet_id: owner.outletId,
          type: "STATIC",
          title: "Counter",
          reference: Fixtures.unique("qr")
        }
      })
      const session = await server.request("POST", "/checkout/sessions", {
        key,
        body: {
          mode: "SUBSCRIPTION",
          title: "Plan",
          reference: Fixtures.unique("sub"),
          price_data: { name: "Gold", amount: 2_500, interval: "MONTH" }
        }
      })
      const paid = await server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, {
        key
      })
      const hook = await server.request("POST", "/webhook-endpoints", {
        key,
        body: { url: "https://example.com/owner", enabled_events: ["*"] }
      })
      const events = (await server.request("GET", "/events", { key })).body as Array<{ id: string }>
      expect([mandate.status, qr.status, session.status, paid.status, hook.status]).toEqual([
        201, 201, 200, 200, 201
      ])
      expect(events.length).toBeGreaterThan(0)
      const ids = [mandate.body.id, qr.body.id, session.body.id, hook.body.id, ...events.map((e) => e.id)]

      const lists = `{
        mandates(limit: 50) { id charges(limit: 10) { id } }
        qrCodes(limit: 100) { id }
        subscriptions(limit: 50) { id invoices(limit: 10) { id } }
        events(limit: 100) { id }
        webhookEndpoints(limit: 100) { id }
        webhookDeliveries(endpoint_id: "${hook.body.id}") { id }
        balanceTransactions(limit: 100) { data { id sourceId } }
      }`
      const singles = `{
        mandate(id: "${mandate.body.id}") { id }
        byReference: mandate(id: "${mandate.body.reference}") { id }
        qrCode(id: "${qr.body.id}") { id }
        checkoutSession(id: "${session.body.id}") { id }
        subscription(id: "${session.body.reference}") { id }
        event(id: "${events[0]!.id}") { id }
      }`
      // The owner sees them all; another merchant, and the owner's live key, see none of them.
      const own = await query(key, singles)
      expect(Object.values(own.body.data).every((v) => v !== null)).toBe(true)
      for (const stranger of [merchant.test, owner.live]) {
        const listed = await query(stranger, lists)
        expect(listed.body.errors).toBeUndefined()
        const seen = JSON.stringify(listed.body.data)
        for (const id of ids) expect(seen).not.toContain(id)
        expect(listed.body.data.webhookDeliveries).toEqual([])
        // The owner's movements are not theirs: a cursor of the owner's names nothing of theirs either.
        const cursor = (await query(key, "{ balanceTransactions(limit: 1) { data { id } } }")).body.data
          .balanceTransactions.data[0].id
        const foreign = await query(
          stranger,
          `{ balanceTransactions(starting_after: "${cursor}") { hasMore } }`
        )
        expect(foreign.body.data).toBeNull()
        expect(foreign.body.errors[0]).toMatchObject({
          message: "starting_after: Balance transaction not found",
          extensions: { code: "BAD_USER_INPUT" }
        })
        const single = await query(stranger, singles)
        expect(single.body.errors).toBeUndefined()
        expect(single.body.data).toEqual({
          mandate: null,
          byReference: null,
          qrCode: null,
          checkoutSession: null,
          subscription: null,
          event: null
        })
      }
    })

    it("filters and pages are decoded as the REST lists decode them", async () => {
      const badPage = await query(merchant.test, "{ balanceTransactions(limit: 0) { hasMore } }")
      expect(badPage.body.errors[0]).toMatchObject({
        message: "limit: limit must be a whole number from 1 to 100",
        extensions: { code: "BAD_USER_INPUT" }
      })
      const bad = await query(merchant.test, "{ mandates(limit: 500) { id } }")
      expect(bad.body.errors[0]).toMatchObject({
        message: "limit: limit must be a whole number from 1 to 100",
        extensions: {
          code: "BAD_USER_INPUT",
          errors: [{ field: "limit", message: "limit must be a whole number from 1 to 100" }]
        }
      })
      // Statuses and types are GraphQL enums: GraphQL itself refuses another value, and lists them.
      const status = await query(merchant.test, "{ mandates(status: SLEEPING) { id } }")
      expect(status.status).toBe(400)
      const messages: Array<string> = status.body.errors.map((e: { message: string }) => e.message)
      expect(messages.join("\n")).toMatch(/"SLEEPING" does not exist in "MandateStatus" enum/)
      expect(messages.join("\n")).not.toMatch(/Expected|actual/)
      expect((await query(merchant.test, "{ mandates(status: ACTIVE) { id } }")).body.errors).toBeUndefined()
      expect(
        (await query(merchant.test, "{ subscriptions(status: PAST_DUE) { id } }")).body.errors
      ).toBeUndefined()
      expect((await query(merchant.test, "{ qrCodes(type: DYNAMIC) { id } }")).body.errors).toBeUndefined()
      // Event types (with dots, so no GraphQL enum) are refused in one line naming the allowed ones.
      const type = await query(merchant.test, '{ events(type: "mandate.payed") { id } }')
      expect(type.body.errors[0].extensions.errors).toEqual([
        {
          field: "type",
          message: expect.stringMatching(/^must be one of mandate\.activated, .*mandate\.charge\.succeeded/)
        }
      ])
      // A nested list's page is bounded the same way (a mandate is needed for its charges to be asked).
      await server.request("POST", "/mandates", { key: merchant.test, body: Fixtures.mandateBody() })
      const nested = await query(merchant.test, `{ mandates(limit: 1) { charges(limit: 0) { id } } }`)
      expect(nested.body.errors[0].message).toBe("limit must be a whole number from 1 to 100")
    })

    it("enforces scopes per field group, and tenancy", async () => {
      const qrOnly = await merchant.key("test", ["qr:write"])
      const denied = await query(qrOnly, "{ mandates { id } }")
      expect(denied.body.data).toBeNull()
      expect(denied.body.errors[0]).toMatchObject({
        message: "This key lacks the scope mandates:write",
        extensions: { code: "FORBIDDEN", scope: "mandates:write" }
      })
      expect((await query(qrOnly, "{ qrCodes { id } }")).body).toEqual({
        data: { qrCodes: expect.any(Array) }
      })
      for (const [field, scope] of [
        ["subscriptions { id }", "subscriptions:write"],
        ["events { id }", "webhooks:write"],
        ["webhookEndpoints { id }", "webhooks:write"],
        ["balance { available }", "payments:write"],
        ["balanceTransactions { hasMore }", "payments:write"],
        [`checkoutSession(id: "x") { id }`, "checkout:write"]
      ] as const)
        expect((await query(qrOnly, `{ ${field} }`)).body.errors[0].extensions.scope).toBe(scope)
      expect(
        (await query(merchant.publishable, '{ checkoutSession(id: "x") { id } }')).body.errors[0].message
      ).toMatch(/publishable key/)

      const other = await Fixtures.merchant(server)
      const theirs = await server.request("POST", "/mandates", {
        key: other.test,
        body: Fixtures.mandateBody()
      })
      expect(
        (await query(merchant.test, `{ mandate(id: "${theirs.body.id}") { id } }`)).body.data.mandate
      ).toBeNull()
      expect(
        (await query(other.live, `{ mandate(id: "${theirs.body.id}") { id } }`)).body.data.mandate
      ).toBeNull()
      const mine = await query(merchant.test, "{ mandates(limit: 100) { id } }")
      expect(mine.body.data.mandates.map((m: { id: string }) => m.id)).not.toContain(theirs.body.id)
      // Without a key, nothing.
      const anonymous = await server.request("POST", "/graphql", { body: { query: "{ mandates { id } }" } })
      expect(anonymous.status).toBe(401)
    })

    it("refuses a query that would cost too much, with a message saying why", async () => {
      const res = await query(merchant.test, "{ mandates(limit: 100) { charges(limit: 100) { id } } }")
      expect(res.status).toBe(400)
      expect(res.body.errors[0].message).toMatch(/would cost 20100, over the limit of 10000/)
      // 100 x (1 + 40 x 2) = 8,100: within the limit.
      const affordable = await query(merchant.test, "{ mandates(limit: 100) { charges(limit: 40) { id } } }")
      expect(affordable.body.errors).toBeUndefined()
      expect(affordable.status).toBe(200)
    })

    it("costs introspection: one full introspection passes, eleven aliased copies do not", async () => {
      const full = await query(merchant.test, G.getIntrospectionQuery())
      expect(full.status).toBe(200)
      const copies = (n: number) =>
        `{ ${Array.from({ length: n }, (_, i) => `s${i}: __schema { queryType { name } }`).join(" ")} }`
      expect((await query(merchant.test, copies(10))).status).toBe(200)
      const eleven = await query(merchant.test, copies(11))
      expect(eleven.status).toBe(400)
      expect(eleven.body.errors[0].message).toMatch(/would cost 11000, over the limit of 10000/)
    })

    it("refuses a fan-out of aliases while parsing, and the service stays responsive", async () => {
      const fanOut = `{ ${Array.from({ length: 2_000 }, (_, i) => `a${i}: mandates(limit: 1) { id }`).join(" ")} }`
      const started = performance.now()
      const [res, health] = await Promise.all([
        query(merchant.test, fanOut),
        server.request("GET", "/healthz")
      ])
      expect(res.status).toBe(400)
      expect(res.body.errors[0].message).toBe(
        `The query is longer than ${GraphQLEngine.MaxTokens} tokens: ask for fewer fields or aliases, or split it`
      )
      expect(health.status).toBe(200)
      // Refused before any rule walks it: well under a second on a quiet machine, bounded on a busy one.
      expect(performance.now() - started).toBeLessThan(10_000)
      const typenames = `{ ${Array.from({ length: 10_001 }, (_, i) => `a${i}: __typename`).join(" ")} }`
      expect((await query(merchant.test, typenames)).status).toBe(400)
    })

    it("bounds nesting inside introspection too: a GraphQL error, never a 5xx", async () => {
      const deep = `{ __schema { types { fields { type ${"{ ofType ".repeat(30)}{ name }${" }".repeat(30)} } } } }`
      const res = await query(merchant.test, deep)
      expect(res.status).toBe(400)
      expect(res.body.errors.map((e: { message: string }) => e.message)).toContain(
        `The query nests 35 levels deep; at most ${GraphQLEngine.MaxTotalDepth} are allowed`
      )
    })
  })
}

describe("GraphQLEngine.depthLimit", () => {
  const schema = G.buildSchema("type Q { a: Q, n: Int } schema { query: Q }")
  const check = (source: string, max: number) =>
    G.validate(schema, G.parse(source), [GraphQLEngine.depthLimit(max)]).map((e) => e.message)
  it("refuses nesting past the limit, through fragments too, and lets introspection through", () => {
    expect(check("{ a { a { n } } }", 3)).toEqual([])
    expect(check("{ a { a { a { n } } } }", 3)).toEqual([
      "The query nests 4 levels deep; at most 3 are allowed"
    ])
    expect(check("{ a { ...F } } fragment F on Q { a { a { n } } }", 3)).toHaveLength(1)
    expect(check("{ __schema { types { fields { type { ofType { ofType { name } } } } } } }", 1)).toEqual([])
  })
})

describe("lists of lists", () => {
  it("a page of mandates gets all their charges in one statement, not one a mandate", async () => {
    let byMandates = 0
    let byMandate = 0
    const counting = Layer.effect(
      Store.ChargesStore,
      Effect.map(Store.ChargesStore, (store) => ({
        ...store,
        listByMandate: (id: string) =>
          Effect.suspend(() => {
            byMandate += 1
            return store.listByMandate(id)
          }),
        listByMandates: (ids: ReadonlyArray<string>, n: number) =>
          Effect.suspend(() => {
            byMandates += 1
            return store.listByMandates(ids, n)
          })
      }))
    )
    const config: Config.ServerConfig = {
      port: 0,
      databaseUrl: undefined,
      dataDir: undefined,
      baseUrl: "http://laari.test",
      checkoutUrl: "http://pay.laari.test",
      opsToken: "ops",
      clock: "system",
      maxBodyBytes: Config.defaults.maxBodyBytes,
      rateLimit: 0,
      webhookAllowPrivate: false
    }
    const database = counting.pipe(Layer.provideMerge(TestDatabase.pglite()))
    const layer = Engine.layer.pipe(
      Layer.provideMerge(Layer.merge(WebhookEndpoints.layer, MemoryQrImages.layer)),
      Layer.provideMerge(Sealer.layer.pipe(Layer.provideMerge(Config.layer(config)))),
      Layer.provideMerge(database)
    )
    await Effect.runPromise(
      Effect.gen(function* () {
        const { schema, loaders } = yield* GraphQLSchema.make
        const merchant = yield* Effect.flatMap(Seed.Seed, (seed) => seed.merchant({ name: "Batched" }))
        const tenant = { merchantId: merchant.id, environment: "test" as const }
        const mandates = yield* Mandates.Mandates
        for (let i = 0; i < 12; i++) {
          const m = yield* mandates.create(tenant, {
            reference: `batch-${i}`,
            title: "Batch",
            description: null,
            perChargeCap: 10_000,
            periodCap: null,
            period: null,
            expiresAt: null,
            returnUrl: null
          })
          yield* mandates.charge(tenant, m.id, { amount: 100 + i })
        }
        const principal: Auth.Principal = { ...tenant, keyId: "k", kind: "secret", scopes: Auth.allScopes }
        const runtime = yield* Effect.runtime<never>()
        const run = <A>(e: Effect.Effect<A, unknown>) => Runtime.runPromise(runtime)(e as Effect.Effect<A>)
        const result = yield* Effect.promise(() =>
          G.graphql({
            schema,
            source: "{ mandates(limit: 12) { reference charges { amount } } }",
            contextValue: { principal, run, ...loaders(run, principal) }
          })
        )
        expect(result.errors).toBeUndefined()
        const list = (result.data as { mandates: Array<{ charges: Array<{ amount: number }> }> }).mandates
        expect(list).toHaveLength(12)
        expect(list.every((m) => m.charges.length === 1)).toBe(true)
        expect(byMandates).toBe(1)
        expect(byMandate).toBe(0)
      }).pipe(Effect.provide(layer))
    )
  }, 60_000)
})
