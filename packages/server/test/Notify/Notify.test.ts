/**
 * Customer notices leave laari: with `LAARI_NOTIFY_URL`, every notice is POSTed from its outbox
 * to a real local receiver standing in for the wallet provider's notification service, signed per
 * Standard Webhooks under the notify secret. On PGlite, and on PostgreSQL when DATABASE_URL is set. The
 * clock is manual (retries wait for it); the signature's timestamp is the wall clock's.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Signing from "../../src/Webhooks/Signing.js"
import * as F from "../support/Fixtures.js"
import { serverBackends } from "../support/PostgresServer.js"
import * as R from "../support/Receiver.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

interface Row {
  readonly id: string
  readonly status: string
  readonly attempts: number
  readonly payload: string | null
  readonly last_error: string | null
}

const headersOf = (r: R.Received) => ({
  "webhook-id": String(r.headers["webhook-id"]),
  "webhook-timestamp": String(r.headers["webhook-timestamp"]),
  "webhook-signature": String(r.headers["webhook-signature"])
})

for (const backend of serverBackends) {
  describe.skipIf(backend.skip)(`customer notices to the notification service on ${backend.name}`, () => {
    const secret = Signing.generateSecret()
    let server: TestServer.LocalTestServer
    let receiver: R.Receiver
    let port: number

    beforeAll(async () => {
      receiver = await R.start()
      port = Number(new URL(receiver.url()).port)
      server = await backend.start({ notifyUrl: receiver.url("/notify"), notifySecret: secret })
    }, 120_000)
    afterAll(async () => {
      await server?.close()
      await receiver?.close()
    })

    const advance = async (seconds: number) => {
      const res = await server.ops("POST", "/ops/clock/advance", { by_seconds: seconds })
      expect(res.status, res.text).toBe(200)
    }
    const row = (id: string) =>
      server
        .sql(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql<Row>`SELECT * FROM notification_outbox WHERE id = ${id}`
          )
        )
        .then((rows) => rows[0])
    const received = (id: string) => receiver.received.filter((r) => r.headers["webhook-id"] === id)

    const liveMandate = async () => {
      const m = await F.merchant(server)
      await server.ops("POST", `/ops/merchants/${m.id}/features`, { mandates_live: true })
      const res = await server.request("POST", "/mandates", { key: m.live, body: F.mandateBody() })
      expect(res.status, res.text).toBe(201)
      return res.body.id as string
    }
    /** Asks for a code; the notice's id is `code:<challenge id>` (`Approval.noticeId`). */
    const requestCode = async (mandateId: string, phone: string) => {
      const res = await server.request("POST", `/approvals/mandates/${mandateId}/challenge`, {
        body: { phone }
      })
      expect(res.status, res.text).toBe(200)
      return { challengeId: res.body.challenge_id as string, noticeId: `code:${res.body.challenge_id}` }
    }

    it("a code notice is POSTed, signed, verified by the standardwebhooks library; a tampered body is not", {
      timeout: 30_000
    }, async () => {
      // laari's clock an hour ahead of the wall clock: the signature's timestamp must still be the wall's.
      await advance(3600)
      const mandateId = await liveMandate()
      const customer = await F.customer(server)
      const { challengeId, noticeId } = await requestCode(mandateId, customer.phone)
      const [got] = await R.eventually(() => received(noticeId).length > 0 && received(noticeId))
      const wall = Math.floor(Date.now() / 1000)

      // The library checks the timestamp against the wall clock (5 minutes): laari signs with it.
      const payload = new StandardWebhook(secret).verify(got!.body, headersOf(got!)) as any
      expect(Math.abs(Number(got!.headers["webhook-timestamp"]) - wall)).toBeLessThan(60)
      expect(R.verifies(secret, got!)).toBe(true)
      expect(() =>
        new StandardWebhook(secret).verify(got!.body.replace(/\d{6}/, "000000"), headersOf(got!))
      ).toThrow()
      expect(() => new StandardWebhook(secret).verify(`${got!.body} `, headersOf(got!))).toThrow()
      expect(() => new StandardWebhook(Signing.generateSecret()).verify(got!.body, headersOf(got!))).toThrow()

      expect(got!.path).toBe("/notify")
      expect(got!.headers["content-type"]).toBe("application/json")
      expect(got!.headers["user-agent"]).toBe("laari-notify/1")
      expect(Object.keys(payload)).toEqual([
        "id",
        "type",
        "created",
        "expires",
        "livemode",
        "customer",
        "title",
        "body",
        "data"
      ])
      expect(payload).toMatchObject({
        id: noticeId,
        type: "one_time_code",
        livemode: true,
        customer: { id: customer.id, phone: customer.phone },
        data: { challenge_id: challengeId, subject_kind: "mandate", subject_id: mandateId }
      })
      expect(payload.expires - payload.created).toBe(300)
      expect(payload.data.code).toMatch(/^\d{6}$/)
      expect(payload.body).toContain(payload.data.code)
      // The code delivered is the one that approves.
      const approved = await server.request("POST", `/approvals/mandates/${mandateId}/approve`, {
        body: { challenge_id: challengeId, otp: payload.data.code }
      })
      expect(approved.status, approved.text).toBe(200)
      // Delivered once; the outbox keeps the record, not the code.
      const done = await R.eventually(async () => {
        const r = await row(noticeId)
        return r?.status === "DELIVERED" && r
      })
      expect(done).toMatchObject({ attempts: 1, payload: null, last_error: null })
      expect(received(noticeId)).toHaveLength(1)
    })

    it("test-mode notices go too, with livemode false", { timeout: 30_000 }, async () => {
      const m = await F.merchant(server)
      const mandate = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
      expect(mandate.status, mandate.text).toBe(201)
      const charge = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
        key: m.test,
        body: { amount: 1_000 }
      })
      expect(charge.status, charge.text).toBe(201)
      const got = await R.eventually(() =>
        receiver.received
          .map((r) => ({ r, doc: JSON.parse(r.body) }))
          .find((x) => x.doc.type === "mandate.charge" && x.doc.data.charge_id === charge.body.id)
      )
      expect(R.verifies(secret, got.r)).toBe(true)
      expect(got.doc).toMatchObject({ livemode: false, expires: null, data: { amount: 1_000 } })
      expect(got.doc.customer.phone).toEqual(expect.any(String))
    })

    it("while the service is down notices wait and are retried; back, each arrives, none lost, none doubled", {
      timeout: 60_000
    }, async () => {
      const customer = await F.customer(server)
      await receiver.close()
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) ids.push((await requestCode(await liveMandate(), customer.phone)).noticeId)
      // Each is tried at once and fails: the connection is refused.
      for (const id of ids)
        await R.eventually(async () => {
          const r = await row(id)
          return r?.attempts === 1 && r.last_error === "connection refused" && r.status === "PENDING"
        })
      // Back, at first answering 503 once per notice, then 200.
      const seen = new Set<string>()
      receiver = await R.start(port)
      receiver.answer = (r) => {
        const id = String(r.headers["webhook-id"])
        if (seen.has(id)) return { status: 200 }
        seen.add(id)
        return { status: 503 }
      }
      await advance(5)
      await R.eventually(() => ids.every((id) => received(id).length === 1), 10_000, "the 503s")
      await advance(15)
      await R.eventually(() => ids.every((id) => received(id).length === 2), 10_000, "the retries")
      // Much later, nothing more comes: each was delivered once.
      await advance(24 * 3600)
      await new Promise((r) => setTimeout(r, 1_500))
      for (const id of ids) {
        const [first, second] = received(id)
        expect(received(id)).toHaveLength(2)
        expect(second!.body).toBe(first!.body)
        expect(R.verifies(secret, first!) && R.verifies(secret, second!)).toBe(true)
        expect(JSON.parse(second!.body).id).toBe(id)
        expect(await row(id)).toMatchObject({ status: "DELIVERED", attempts: 3 })
      }
    })

    it("a code that expires while the service is down is never sent late", { timeout: 60_000 }, async () => {
      const customer = await F.customer(server)
      await receiver.close()
      const { noticeId } = await requestCode(await liveMandate(), customer.phone)
      await R.eventually(async () => (await row(noticeId))?.attempts === 1)
      // Retried while it lasts (five minutes), refused every time.
      await advance(6 * 60)
      const expired = await row(noticeId)
      expect(expired).toMatchObject({ status: "EXPIRED", payload: null })
      expect(expired!.attempts).toBeGreaterThan(1)
      // Back: the code is not sent, however long the clock runs.
      receiver = await R.start(port)
      await advance(3600)
      await new Promise((r) => setTimeout(r, 1_500))
      expect(received(noticeId)).toEqual([])
      expect(await row(noticeId)).toMatchObject({ status: "EXPIRED", attempts: expired!.attempts })
      const notices = (await server.ops("GET", `/ops/customers/${customer.id}/notifications`))
        .body as Array<any>
      expect(notices.find((n) => n.id === noticeId)?.body).toBe("Your code expired unused.")
    })
  })
}

describe("the service as pnpm start runs it, on the system clock, without LAARI_NOTIFY_SECRET", () => {
  const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-notify-"))
  const scope = Effect.runSync(Scope.make())
  let receiver: R.Receiver
  /** A fresh PostgreSQL database when DATABASE_URL is set: the two starts then skip PGlite's initdb. */
  let database: Record<string, string> = {}
  beforeAll(async () => {
    receiver = await R.start()
    if (TestDatabase.postgresUrl !== undefined)
      database = {
        DATABASE_URL: await Effect.runPromise(
          Scope.extend(TestDatabase.createDatabase(TestDatabase.postgresUrl), scope)
        )
      }
  })
  afterAll(async () => {
    await receiver?.close()
    rmSync(dataDir, { recursive: true, force: true })
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const start = async () => {
    const p = await ServerProcess.start({
      env: {
        ...database,
        LAARI_DATA_DIR: dataDir,
        LAARI_OPS_TOKEN: TestServer.OpsToken,
        LAARI_NOTIFY_URL: receiver.url("/n")
      },
      // A fresh PGlite directory migrates first: seconds on a quiet machine, minutes at load 25.
      readyTimeoutMs: 300_000
    })
    const out = await R.eventually(() => p.stdout().includes("notices") && p.stdout(), 30_000, "the banner")
    const secret = /notices {5}POST .*\n {14}(whsec_\S+)/.exec(out)?.[1]
    return { p, out, secret }
  }

  it("generates a secret once, says where it is kept, signs with it, and keeps it across a restart", async () => {
    const first = await start()
    try {
      expect(first.out).toContain(
        `notices     POST ${receiver.url("/n")}, signed with a secret generated once and kept in the database`
      )
      expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      const api = TestServer.client(first.p.baseUrl)
      const m = await F.merchant(api as TestServer.TestServer)
      await api.ops("POST", `/ops/merchants/${m.id}/features`, { mandates_live: true })
      const mandate = await api.request("POST", "/mandates", { key: m.live, body: F.mandateBody() })
      const customer = await F.customer(api as TestServer.TestServer)
      const challenge = await api.request("POST", `/approvals/mandates/${mandate.body.id}/challenge`, {
        body: { phone: customer.phone }
      })
      expect(challenge.status, challenge.text).toBe(200)
      const id = `code:${challenge.body.challenge_id}`
      const got = await R.eventually(() => receiver.received.find((r) => r.headers["webhook-id"] === id))
      expect(new StandardWebhook(first.secret!).verify(got.body, headersOf(got))).toMatchObject({ id })
    } finally {
      await first.p.stop()
    }
    const second = await start()
    await second.p.stop()
    expect(second.secret).toBe(first.secret)
  }, 600_000)
})

describe.skipIf(TestDatabase.postgresUrl === undefined)("two servers on one PostgreSQL", () => {
  const scope = Effect.runSync(Scope.make())
  const secret = Signing.generateSecret()
  let receiver: R.Receiver
  let servers: Array<TestServer.LocalTestServer> = []

  beforeAll(async () => {
    receiver = await R.start()
    const databaseUrl = await Effect.runPromise(
      Scope.extend(TestDatabase.createDatabase(TestDatabase.postgresUrl!), scope)
    )
    const config = { notifyUrl: receiver.url("/both"), notifySecret: secret }
    servers = [
      await TestServer.start({ databaseUrl, config }),
      await TestServer.start({ databaseUrl, config })
    ]
  }, 120_000)
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()))
    await receiver?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("share the outbox: every notice is delivered by one of them, exactly once", async () => {
    // Slow answers keep both workers busy at once.
    receiver.answer = () => ({ status: 200, delayMs: 50 })
    const [a, b] = servers as [TestServer.LocalTestServer, TestServer.LocalTestServer]
    const m = await F.merchant(a)
    const mandate = await a.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    expect(mandate.status, mandate.text).toBe(201)
    const charges = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).request("POST", `/mandates/${mandate.body.id}/charges`, {
          key: m.test,
          body: { amount: 100 }
        })
      )
    )
    expect(charges.map((c) => c.status)).toEqual(charges.map(() => 201))
    const ids = new Set(charges.map((c) => c.body.id as string))
    const notices = () =>
      receiver.received.map((r) => JSON.parse(r.body)).filter((d) => ids.has(d.data.charge_id))
    await R.eventually(() => notices().length >= 40, 20_000, "40 notices")
    await new Promise((r) => setTimeout(r, 1_500))
    expect(notices()).toHaveLength(40)
    expect(new Set(notices().map((d) => d.data.charge_id))).toEqual(ids)
  }, 60_000)
})
