/**
 * Webhooks end to end over HTTP: endpoints, signed deliveries to a real receiver,
 * retries on the manual clock, the log, resend, rotation, disabling, scoping. The clock only moves
 * forward and is shared by the tests of this file, which run in order.
 */
import { Webhook as StandardWebhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as R from "../support/Receiver.js"
import * as TestServer from "../support/TestServer.js"

let server: TestServer.TestServer
let receiver: R.Receiver

beforeAll(async () => {
  server = await TestServer.start()
  receiver = await R.start()
}, 120_000)
afterAll(async () => {
  await server?.close()
  await receiver?.close()
})

const register = (key: string, body: Record<string, unknown>) =>
  server.request("POST", "/webhook-endpoints", { key, body })

/** An endpoint on its own path of the receiver. */
const endpoint = async (key: string, events: ReadonlyArray<string> = ["*"]) => {
  const path = `/${F.unique("hook")}`
  const res = await register(key, { url: receiver.url(path), enabled_events: events })
  expect(res.status, res.text).toBe(201)
  return { id: res.body.id as string, secret: res.body.secret as string, path }
}

/** Requests that reached `path`. */
const at = (path: string) => receiver.received.filter((r) => r.path === path)
const envelopes = (path: string) => at(path).map((r) => JSON.parse(r.body))
const waitFor = (path: string, n: number) =>
  R.eventually(() => at(path).length >= n && at(path), 10_000, `${n} deliveries to ${path}`)

const advance = async (seconds: number) => {
  const res = await server.ops("POST", "/ops/clock/advance", { by_seconds: seconds })
  expect(res.status, res.text).toBe(200)
}
const log = async (key: string, id: string, query = "") => {
  const res = await server.request("GET", `/webhook-endpoints/${id}/deliveries${query}`, { key })
  expect(res.status, res.text).toBe(200)
  return res.body as Array<any>
}
const mandate = async (key: string, body: Record<string, unknown> = {}) => {
  const res = await server.request("POST", "/mandates", { key, body: F.mandateBody(body) })
  expect(res.status, res.text).toBe(201)
  return res.body.id as string
}
const eventsOf = async (key: string, query = "") => {
  const res = await server.request("GET", `/events${query}`, { key })
  expect(res.status, res.text).toBe(200)
  return res.body as Array<any>
}

/** Whether a delivery's webhook-timestamp is the wall time of the test, to the second. */
const startedAt = Math.floor(Date.now() / 1000)
const wallSeconds = (r: { readonly headers: Record<string, unknown> }) => {
  const stamp = Number(r.headers["webhook-timestamp"])
  return stamp >= startedAt && stamp <= Math.ceil(Date.now() / 1000)
}

describe("signatures", () => {
  it("verify with the standardwebhooks library and with node:crypto", async () => {
    const m = await F.merchant(server)
    const hook = await endpoint(m.test)
    await mandate(m.test)
    const [got] = await waitFor(hook.path, 1)
    expect(R.verifies(hook.secret, got!)).toBe(true)
    expect(R.verifies(`whsec_${Buffer.alloc(32, 1).toString("base64")}`, got!)).toBe(false)
    // The library checks the timestamp against the wall clock: this runs before the clock moves.
    const payload = new StandardWebhook(hook.secret).verify(got!.body, {
      "webhook-id": String(got!.headers["webhook-id"]),
      "webhook-timestamp": String(got!.headers["webhook-timestamp"]),
      "webhook-signature": String(got!.headers["webhook-signature"])
    })
    expect(payload).toMatchObject({ type: "mandate.activated", api_version: "2026-07-01", livemode: false })
    expect(() =>
      new StandardWebhook(hook.secret).verify(`${got!.body} `, {
        "webhook-id": String(got!.headers["webhook-id"]),
        "webhook-timestamp": String(got!.headers["webhook-timestamp"]),
        "webhook-signature": String(got!.headers["webhook-signature"])
      })
    ).toThrow()
    expect(got!.headers["content-type"]).toBe("application/json")
    expect(got!.headers["webhook-id"]).toBe(JSON.parse(got!.body).id)
  })
  it("verify with the standardwebhooks library after the manual clock moved days ahead", async () => {
    const m = await F.merchant(server)
    const hook = await endpoint(m.test)
    await advance(3 * 86_400)
    await mandate(m.test)
    const [got] = await waitFor(hook.path, 1)
    const headers = {
      "webhook-id": String(got!.headers["webhook-id"]),
      "webhook-timestamp": String(got!.headers["webhook-timestamp"]),
      "webhook-signature": String(got!.headers["webhook-signature"])
    }
    expect(new StandardWebhook(hook.secret).verify(got!.body, headers)).toMatchObject({
      type: "mandate.activated"
    })
    // The event itself is stamped on the service's clock, three days ahead of the signature.
    expect(JSON.parse(got!.body).created - Number(headers["webhook-timestamp"])).toBeGreaterThan(
      3 * 86_400 - 60
    )
  })
})

describe("webhook endpoints", () => {
  it("are registered with a whsec_ secret shown once, never read back", async () => {
    const m = await F.merchant(server)
    const res = await register(m.test, {
      url: receiver.url("/a"),
      enabled_events: ["mandate.activated"],
      description: "Orders"
    })
    expect(res.status).toBe(201)
    expect(Object.keys(res.body).sort()).toEqual(
      ["id", "url", "enabledEvents", "description", "status", "statusReason", "secret", "createdAt"].sort()
    )
    expect(res.body).toMatchObject({
      url: receiver.url("/a"),
      status: "ENABLED",
      statusReason: null,
      enabledEvents: ["mandate.activated"],
      description: "Orders"
    })
    expect(res.body.createdAt).toMatch(/\+05:00$/)
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(res.body.secret.slice(6), "base64")).toHaveLength(32)
    const read = await server.request("GET", `/webhook-endpoints/${res.body.id}`, { key: m.test })
    expect(read.status).toBe(200)
    expect(read.body).toEqual(Object.fromEntries(Object.entries(res.body).filter(([k]) => k !== "secret")))
    const list = await server.request("GET", "/webhook-endpoints", { key: m.test })
    expect(list.text).not.toContain(res.body.secret.slice(6))
    expect(read.text).not.toContain(res.body.secret.slice(6))
  })

  it("refuse unknown event types, repeats, an empty list and * with others", async () => {
    const m = await F.merchant(server)
    for (const enabled_events of [
      ["mandate.created"],
      [],
      ["*", "invoice.paid"],
      ["invoice.paid", "invoice.paid"]
    ]) {
      const res = await register(m.test, { url: receiver.url(), enabled_events })
      expect(res.status, JSON.stringify(enabled_events)).toBe(422)
      expect(res.body.errors[0].field).toMatch(/^enabled_events/)
    }
    expect((await register(m.test, { url: receiver.url(), enabled_events: ["*"] })).status).toBe(201)
    expect((await register(m.test, { url: receiver.url() })).status).toBe(422)
  })

  it("with LAARI_WEBHOOK_ALLOW_PRIVATE, are any http(s) URL without credentials (WebhookTargets.test: without)", async () => {
    const m = await F.merchant(server)
    for (const url of ["https://user:pass@example.com/hook", "ftp://example.com/hook", "not a url"])
      for (const key of [m.test, m.live]) {
        const res = await register(key, { url, enabled_events: ["*"] })
        expect(res.status, url).toBe(422)
        expect(res.body.errors, url).toEqual([{ field: "url", message: expect.any(String) }])
      }
    for (const key of [m.test, m.live])
      expect((await register(key, { url: "http://127.0.0.1:9/hook", enabled_events: ["*"] })).status).toBe(
        201
      )
  })

  it("are changed, disabled, enabled and deleted", async () => {
    const m = await F.merchant(server)
    const hook = await endpoint(m.test, ["invoice.paid"])
    const update = (body: Record<string, unknown>) =>
      server.request("POST", `/webhook-endpoints/${hook.id}`, { key: m.test, body })
    const changed = await update({ enabled_events: ["*"], description: "All", url: receiver.url("/moved") })
    expect(changed.status, changed.text).toBe(200)
    expect(changed.body).toMatchObject({
      enabledEvents: ["*"],
      description: "All",
      url: receiver.url("/moved")
    })
    expect((await update({ description: null })).body.description).toBeNull()
    expect((await update({ status: "DISABLED" })).body).toMatchObject({
      status: "DISABLED",
      statusReason: "Disabled by the merchant"
    })
    expect((await update({ status: "ENABLED" })).body).toMatchObject({
      status: "ENABLED",
      statusReason: null
    })
    expect((await update({ url: "ftp://x" })).status).toBe(422)
    expect((await update({ secret: "whsec_x" })).status).toBe(422)
    const list = await server.request("GET", "/webhook-endpoints", { key: m.test })
    expect(list.body.map((e: any) => e.id)).toContain(hook.id)
    const deleted = await server.request("DELETE", `/webhook-endpoints/${hook.id}`, { key: m.test })
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({ id: hook.id, deleted: true })
    expect((await server.request("GET", `/webhook-endpoints/${hook.id}`, { key: m.test })).status).toBe(404)
    expect((await server.request("DELETE", `/webhook-endpoints/${hook.id}`, { key: m.test })).status).toBe(
      404
    )
    const after = await server.request("GET", "/webhook-endpoints", { key: m.test })
    expect(after.body.map((e: any) => e.id)).not.toContain(hook.id)
    // A deleted endpoint receives nothing more.
    await mandate(m.test)
    await new Promise((r) => setTimeout(r, 300))
    expect(at("/moved")).toHaveLength(0)
  })

  it("belong to one merchant and environment: anyone else gets 404; the scope is webhooks:write", async () => {
    const m = await F.merchant(server)
    const other = await F.merchant(server)
    const hook = await endpoint(m.test)
    const eventId = (await eventsOf(m.test))[0]?.id ?? "evt_none"
    const paths: Array<[string, string, unknown?]> = [
      ["GET", `/webhook-endpoints/${hook.id}`],
      ["POST", `/webhook-endpoints/${hook.id}`, { description: "x" }],
      ["DELETE", `/webhook-endpoints/${hook.id}`],
      ["POST", `/webhook-endpoints/${hook.id}/rotate-secret`, {}],
      ["GET", `/webhook-endpoints/${hook.id}/deliveries`],
      ["POST", `/webhook-endpoints/${hook.id}/resend`, { event_id: eventId }]
    ]
    for (const key of [other.test, m.live]) {
      for (const [method, path, body] of paths) {
        const res = await server.request(method, path, { key, body })
        expect(res.status, `${method} ${path}`).toBe(404)
        expect(res.body).toEqual({
          message: "Webhook endpoint not found",
          code: "WEBHOOK_ENDPOINT_NOT_FOUND"
        })
      }
    }
    const narrow = await m.key("test", ["mandates:write"])
    for (const key of [narrow, m.publishable]) {
      for (const [method, path, body] of [
        ...paths,
        ["GET", "/webhook-endpoints"],
        ["GET", "/events"]
      ] as const) {
        const res = await server.request(method, path, { key, body })
        expect(res.status, `${method} ${path}`).toBe(403)
      }
    }
    const scoped = await m.key("test", ["webhooks:write"])
    expect((await server.request("GET", `/webhook-endpoints/${hook.id}`, { key: scoped })).status).toBe(200)
    // The endpoint still works after all the refused attempts.
    expect((await server.request("GET", `/webhook-endpoints/${hook.id}`, { key: m.test })).body.status).toBe(
      "ENABLED"
    )
  })
})

describe("deliveries", () => {
  it("every mandate, checkout and billing event of test mode reaches the endpoints subscribed to it and no others", async () => {
    const m = await F.merchant(server)
    const other = await F.merchant(server)
    const all = await endpoint(m.test, ["*"])
    const failed = await endpoint(m.test, ["mandate.charge.failed"])
    const paid = await endpoint(m.test, ["invoice.paid", "subscription.activated"])
    const theirs = await endpoint(other.test, ["*"])

    const id = await mandate(m.test, { per_charge_cap: 50_000 })
    const charge = (body: Record<string, unknown>, mandateId = id) =>
      server.request("POST", `/mandates/${mandateId}/charges`, { key: m.test, body })
    expect((await charge({ amount: 1_000 })).status).toBe(201)
    const refused = await charge({ amount: 60_000 })
    expect(refused.status).toBe(422)
    expect((await charge({ amount: 1_000 }, "00000000-0000-4000-8000-000000000000")).status).toBe(404)
    expect((await server.request("POST", `/mandates/${id}/revoke`, { key: m.test })).status).toBe(200)

    const session = await server.request("POST", "/checkout/sessions", {
      key: m.test,
      body: {
        mode: "SUBSCRIPTION",
        reference: F.unique("sub"),
        title: "Gym",
        price_data: { name: "Gold", amount: 25_000, interval: "MONTH" }
      }
    })
    expect(session.status, session.text).toBe(200)
    const pay = await server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, {
      key: m.test
    })
    expect(pay.status, pay.text).toBe(200)
    const subscriptionId = pay.body.subscription.id as string
    // An empty wallet: the renewal misses four times over three and a half days, then dunning ends it.
    expect(
      (await server.request("POST", "/test-helpers/payer", { key: m.test, body: { balance: 0 } })).status
    ).toBe(200)
    await advance(36 * 86_400)

    const recorded = await eventsOf(m.test, "?limit=100")
    const types = new Set(recorded.map((e) => e.type))
    for (const type of [
      "mandate.activated",
      "mandate.charge.succeeded",
      "mandate.charge.failed",
      "mandate.revoked",
      "subscription.activated",
      "invoice.paid",
      "checkout.session.completed",
      "invoice.payment_failed",
      "subscription.past_due",
      "subscription.canceled"
    ])
      expect(types, type).toContain(type)
    expect(recorded.filter((e) => e.type === "mandate.charge.failed")).toHaveLength(1)
    expect(recorded.filter((e) => e.type === "invoice.payment_failed")).toHaveLength(4)
    expect(recorded.filter((e) => e.type === "subscription.past_due")).toHaveLength(1)

    const ids = (path: string) =>
      R.eventually(() => {
        const got = envelopes(path).map((e) => e.id)
        return got
      })
    await R.eventually(() => at(all.path).length >= recorded.length, 10_000, "every event")
    const received = at(all.path)
    expect(new Set(received.map((r) => JSON.parse(r.body).id))).toEqual(new Set(recorded.map((e) => e.id)))
    for (const r of received) expect(R.verifies(all.secret, r)).toBe(true)
    // Exactly as recorded: the body is the stored envelope, byte for byte.
    const byId = new Map(received.map((r) => [JSON.parse(r.body).id, r.body]))
    const listed = (await server.request("GET", "/events?limit=100", { key: m.test })).text
    for (const e of recorded) expect(listed).toContain(byId.get(e.id))

    expect((await ids(failed.path)).sort()).toEqual(
      recorded.filter((e) => e.type === "mandate.charge.failed").map((e) => e.id)
    )
    const subscribed = recorded.filter((e) => ["invoice.paid", "subscription.activated"].includes(e.type))
    await R.eventually(() => at(paid.path).length >= subscribed.length)
    expect(new Set(envelopes(paid.path).map((e) => e.id))).toEqual(new Set(subscribed.map((e) => e.id)))
    const mine = new Set(recorded.map((e) => e.id))
    expect(envelopes(theirs.path).filter((e) => mine.has(e.id))).toEqual([])

    // The payloads the spec names.
    const of = (type: string) => recorded.filter((e) => e.type === type)
    expect(of("mandate.charge.failed")[0].data.object).toMatchObject({
      mandate_id: id,
      code: refused.body.code
    })
    const firstMiss = of("invoice.payment_failed").at(-1)
    expect(firstMiss.data.object).toMatchObject({
      attempt_count: 1,
      subscription_id: subscriptionId,
      subscription_reference: session.body.reference
    })
    expect(firstMiss.data.object.next_retry_at).toBe(firstMiss.created + 12 * 3600)
    expect(of("invoice.payment_failed")[0].data.object).toMatchObject({
      attempt_count: 4,
      next_retry_at: null
    })
    expect(of("subscription.canceled")[0].data.object).toMatchObject({
      id: subscriptionId,
      cancellation_initiator: "DUNNING"
    })
    expect(of("checkout.session.completed")[0].data.object).toMatchObject({
      mode: "SUBSCRIPTION",
      subscription: { id: subscriptionId }
    })
    expect(of("invoice.paid")[0].data.object).toMatchObject({
      subscription_id: subscriptionId,
      subscription_reference: session.body.reference
    })
  }, 60_000)

  it("carry a sequence per mandate and per subscription that grows with each event", async () => {
    const m = await F.merchant(server)
    const first = await mandate(m.test)
    const second = await mandate(m.test)
    await server.request("POST", `/mandates/${first}/charges`, { key: m.test, body: { amount: 500 } })
    await server.request("POST", `/mandates/${first}/revoke`, { key: m.test })
    const recorded = (await eventsOf(m.test)).reverse()
    const about = (mandateId: string) =>
      recorded
        .filter((e) => (e.data.object.mandate_id ?? e.data.object.id) === mandateId)
        .map((e) => [e.type, e.sequence])
    expect(about(first)).toEqual([
      ["mandate.activated", 1],
      ["mandate.charge.succeeded", 2],
      ["mandate.revoked", 3]
    ])
    expect(about(second)).toEqual([["mandate.activated", 1]])
  })

  it("are retried on the manual clock with the same webhook-id, signed at the wall time, as logged", {
    timeout: 30_000
  }, async () => {
    const m = await F.merchant(server)
    const hook = await endpoint(m.test, ["mandate.activated"])
    let calls = 0
    const previous = receiver.answer
    receiver.answer = (r) =>
      r.path === hook.path ? (++calls <= 2 ? { status: 500, body: "down" } : { status: 204 }) : previous(r)
    try {
      await mandate(m.test)
      await waitFor(hook.path, 1)
      const [pending, first] = await R.eventually(async () => {
        const entries = await log(m.test, hook.id)
        return entries[1]?.status === "FAILED" && entries
      })
      // The next attempt is logged as PENDING, due when the failed one said.
      expect(pending).toMatchObject({
        attempt: 2,
        status: "PENDING",
        attemptedAt: null,
        scheduledAt: first.nextRetryAt
      })
      expect(first).toMatchObject({
        attempt: 1,
        status: "FAILED",
        responseStatus: 500,
        responseBody: "down",
        error: "HTTP 500",
        resend: false
      })
      expect(Date.parse(first.nextRetryAt) - Date.parse(first.attemptedAt)).toBe(5_000)
      expect(first.durationMs).toBeGreaterThanOrEqual(0)
      await advance(4)
      expect(at(hook.path)).toHaveLength(1)
      await advance(1)
      await waitFor(hook.path, 2)
      await advance(5 * 60)
      await waitFor(hook.path, 3)
      const attempts = at(hook.path)
      expect(new Set(attempts.map((r) => r.headers["webhook-id"])).size).toBe(1)
      // Signed at the wall time of each attempt, not at the manual clock's.
      for (const r of attempts) expect(wallSeconds(r)).toBe(true)
      // One signature per signing second: attempts made within the same wall second share it.
      expect(new Set(attempts.map((r) => r.headers["webhook-signature"])).size).toBe(
        new Set(attempts.map((r) => r.headers["webhook-timestamp"])).size
      )
      for (const r of attempts) expect(R.verifies(hook.secret, r)).toBe(true)
      expect(new Set(attempts.map((r) => r.body)).size).toBe(1)
      const entries = await R.eventually(async () => {
        const e = await log(m.test, hook.id)
        return e[0]?.status === "SUCCEEDED" && e
      })
      expect(entries.map((e) => [e.attempt, e.status, e.responseStatus])).toEqual([
        [3, "SUCCEEDED", 204],
        [2, "FAILED", 500],
        [1, "FAILED", 500]
      ])
      expect(entries[0].nextRetryAt).toBeNull()
      expect((await log(m.test, hook.id, "?status=FAILED")).map((e) => e.attempt)).toEqual([2, 1])
      expect((await log(m.test, hook.id, "?limit=1&offset=1")).map((e) => e.attempt)).toEqual([2])
      const eventId = attempts[0]!.headers["webhook-id"]
      expect(await log(m.test, hook.id, `?event_id=${eventId}`)).toHaveLength(3)
      expect(await log(m.test, hook.id, "?event_id=evt_other")).toHaveLength(0)
    } finally {
      receiver.answer = previous
    }
  })

  it("end FAILED after about three days, and an endpoint failing for three days is disabled", async () => {
    const m = await F.merchant(server)
    const hook = await endpoint(m.test)
    const previous = receiver.answer
    receiver.answer = (r) => (r.path === hook.path ? { status: 503 } : previous(r))
    try {
      await mandate(m.test)
      await waitFor(hook.path, 1)
      await advance(4 * 86_400)
      const entries = await R.eventually(async () => {
        const e = await log(m.test, hook.id)
        return e.length === 10 && e.every((x) => x.status === "FAILED") && e
      })
      expect(entries.map((e) => e.attempt)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1])
      expect(entries[0].nextRetryAt).toBeNull()
      const span = Date.parse(entries[0].attemptedAt) - Date.parse(entries[9].attemptedAt)
      expect(span).toBe((75 * 3600 + 35 * 60 + 5) * 1000)
      const read = await server.request("GET", `/webhook-endpoints/${hook.id}`, { key: m.test })
      expect(read.body.status).toBe("DISABLED")
      expect(read.body.statusReason).toMatch(/every delivery failed for 3 days.*HTTP 503/)
      // Disabled: nothing more is queued for it.
      await mandate(m.test)
      await advance(60)
      expect(await log(m.test, hook.id)).toHaveLength(10)
      expect(at(hook.path)).toHaveLength(10)
      // Enabled again by the merchant, it receives what follows.
      receiver.answer = previous
      await server.request("POST", `/webhook-endpoints/${hook.id}`, {
        key: m.test,
        body: { status: "ENABLED" }
      })
      await mandate(m.test)
      await waitFor(hook.path, 11)
    } finally {
      receiver.answer = previous
    }
  }, 30_000)

  it("resend an event anew: same webhook-id, a fresh signature, logged, not retried", async () => {
    const m = await F.merchant(server)
    const other = await F.merchant(server)
    const hook = await endpoint(m.test)
    await mandate(m.test)
    const [first] = await waitFor(hook.path, 1)
    const eventId = String(first!.headers["webhook-id"])
    await advance(7)
    const resend = (body: unknown, key = m.test) =>
      server.request("POST", `/webhook-endpoints/${hook.id}/resend`, { key, body })
    const res = await resend({ event_id: eventId })
    expect(res.status, res.text).toBe(202)
    expect(res.body).toMatchObject({
      eventId,
      attempt: 2,
      status: "PENDING",
      resend: true,
      attemptedAt: null
    })
    const [, again] = await waitFor(hook.path, 2)
    expect(again!.headers["webhook-id"]).toBe(eventId)
    expect(again!.body).toBe(first!.body)
    expect(wallSeconds(again!)).toBe(true)
    expect(R.verifies(hook.secret, again!)).toBe(true)
    const entry = await R.eventually(async () => {
      const e = (await log(m.test, hook.id))[0]
      return e?.status === "SUCCEEDED" && e
    })
    expect(entry).toMatchObject({ id: res.body.id, attempt: 2, resend: true, nextRetryAt: null })
    expect((await resend({ event_id: "evt_unknown" })).body).toEqual({
      message: "Event not found",
      code: "EVENT_NOT_FOUND"
    })
    const theirs = await mandate(other.test)
    const theirEvent = (await eventsOf(other.test)).find((e) => e.data.object.id === theirs)
    expect((await resend({ event_id: theirEvent.id })).status).toBe(404)
    expect((await resend({})).status).toBe(422)
  })

  it("sign with both secrets after a rotation until the previous one expires", async () => {
    const m = await F.merchant(server)
    const hook = await endpoint(m.test)
    const rotated = await server.request("POST", `/webhook-endpoints/${hook.id}/rotate-secret`, {
      key: m.test,
      body: { expire_previous_after_seconds: 60 }
    })
    expect(rotated.status, rotated.text).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(hook.secret)
    await mandate(m.test)
    const [both] = await waitFor(hook.path, 1)
    const signatures = R.signatures(both!)
    expect(signatures).toHaveLength(2)
    const [id, ts] = [String(both!.headers["webhook-id"]), String(both!.headers["webhook-timestamp"])]
    expect(signatures[0]).toBe(R.sign(rotated.body.secret, id, ts, both!.body))
    expect(signatures[1]).toBe(R.sign(hook.secret, id, ts, both!.body))
    await advance(61)
    await mandate(m.test)
    const [, one] = await waitFor(hook.path, 2)
    expect(R.signatures(one!)).toHaveLength(1)
    expect(R.verifies(rotated.body.secret, one!)).toBe(true)
    expect(R.verifies(hook.secret, one!)).toBe(false)
    // No body at all: the default overlap of 24 hours.
    const plain = await server.request("POST", `/webhook-endpoints/${hook.id}/rotate-secret`, { key: m.test })
    expect(plain.status, plain.text).toBe(200)
    const now = (await server.ops("GET", "/ops/clock")).body.now as string
    expect(Date.parse(plain.body.previousSecretExpiresAt) - Date.parse(now)).toBe(86_400_000)
    const bad = await server.request("POST", `/webhook-endpoints/${hook.id}/rotate-secret`, {
      key: m.test,
      body: { expire_previous_after_seconds: 8 * 86_400 }
    })
    expect(bad.status).toBe(422)
  })

  it("time out after 10 s and log it", async () => {
    const m = await F.merchant(server)
    const hook = await endpoint(m.test)
    const previous = receiver.answer
    receiver.answer = (r) => (r.path === hook.path ? { status: 200, delayMs: 11_000 } : previous(r))
    try {
      await mandate(m.test)
      const entry = await R.eventually(async () => {
        const e = (await log(m.test, hook.id)).find((x) => x.attempt === 1)
        return e?.status === "FAILED" && e
      }, 20_000)
      expect(entry).toMatchObject({ error: "timed out after 10 s", responseStatus: null })
      expect(entry.durationMs).toBeGreaterThanOrEqual(10_000)
    } finally {
      receiver.answer = previous
    }
  }, 30_000)

  it("one slow endpoint does not delay another's deliveries", async () => {
    const m = await F.merchant(server)
    const slow = await endpoint(m.test)
    const fast = await endpoint(m.test)
    const previous = receiver.answer
    // Scaled for a busy machine: the fast endpoint's window stays below one slow answer (itself below the
    // attempt timeout, 10 s), so waiting behind even one slow delivery fails it.
    const slowMs = 9_500
    receiver.answer = (r) => (r.path === slow.path ? { status: 200, delayMs: slowMs } : previous(r))
    try {
      for (let i = 0; i < 20; i++) await mandate(m.test)
      const started = Date.now()
      await R.eventually(
        () => at(fast.path).length >= 20,
        slowMs - 1_500,
        "the fast endpoint's 20 deliveries"
      )
      expect(Date.now() - started).toBeLessThan(slowMs - 1_500)
      expect(at(slow.path).length).toBeLessThan(20)
    } finally {
      receiver.answer = previous
    }
  }, 90_000)
})

describe("events", () => {
  it("are listed newest first exactly as delivered, by type and creation, in the key's environment", async () => {
    const m = await F.merchant(server)
    const other = await F.merchant(server)
    const first = await mandate(m.test)
    await advance(10)
    await server.request("POST", `/mandates/${first}/revoke`, { key: m.test })
    const list = await server.request("GET", "/events", { key: m.test })
    expect(list.status).toBe(200)
    expect(list.body.map((e: any) => e.type)).toEqual(["mandate.revoked", "mandate.activated"])
    expect(list.text).toBe(
      `[${await Promise.all(list.body.map(async (e: any) => (await server.request("GET", `/events/${e.id}`, { key: m.test })).text)).then((t) => t.join(","))}]`
    )
    expect((await eventsOf(m.test, "?type=mandate.revoked")).map((e) => e.type)).toEqual(["mandate.revoked"])
    const activated = list.body[1]
    expect((await eventsOf(m.test, `?created_after=${activated.created}`)).map((e) => e.type)).toEqual([
      "mandate.revoked"
    ])
    expect(await eventsOf(m.test, "?limit=1&offset=1")).toEqual([activated])
    expect(await eventsOf(m.live)).toEqual([])
    expect((await server.request("GET", "/events?type=mandate.created", { key: m.test })).status).toBe(422)
    const one = await server.request("GET", `/events/${activated.id}`, { key: m.test })
    expect(one.body).toEqual(activated)
    for (const key of [other.test, m.live]) {
      const res = await server.request("GET", `/events/${activated.id}`, { key })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ message: "Event not found", code: "EVENT_NOT_FOUND" })
    }
  })
})

describe("operators", () => {
  it("list a merchant's endpoints in both environments and an endpoint's log", async () => {
    const m = await F.merchant(server)
    const test = await endpoint(m.test)
    const live = await register(m.live, { url: "https://example.com/hook", enabled_events: ["*"] })
    await mandate(m.test)
    await waitFor(test.path, 1)
    const endpoints = await server.ops("GET", `/ops/merchants/${m.id}/webhook-endpoints`)
    expect(endpoints.status).toBe(200)
    expect(endpoints.body.map((e: any) => [e.id, e.environment])).toEqual([
      [live.body.id, "live"],
      [test.id, "test"]
    ])
    expect(endpoints.text).not.toContain(test.secret.slice(6))
    const entries = await R.eventually(async () => {
      const res = await server.ops("GET", `/ops/merchants/${m.id}/webhook-endpoints/${test.id}/deliveries`)
      return res.body.length === 1 && res.body[0].status === "SUCCEEDED" && res.body
    })
    expect(entries[0]).toMatchObject({ endpointId: test.id, attempt: 1 })
    const unknown = await server.ops("GET", `/ops/merchants/${m.id}/webhook-endpoints/nope/deliveries`)
    expect(unknown.status).toBe(404)
    expect(
      (await server.request("GET", `/ops/merchants/${m.id}/webhook-endpoints`, { key: m.test })).status
    ).toBe(401)
  })
})

describe("live mode (LAARI_WEBHOOK_ALLOW_PRIVATE=true, for a local receiver)", () => {
  it("delivers a declined live mandate to the live endpoint only, with livemode true", async () => {
    // The file's server: TestServer allows private targets already, and the merchant is a fresh one.
    const live = server
    const m = await F.merchant(live)
    await live.ops("POST", `/ops/merchants/${m.id}/features`, { mandates_live: true })
    const liveHook = `/${F.unique("live")}`
    const testHook = `/${F.unique("test")}`
    const made = await live.request("POST", "/webhook-endpoints", {
      key: m.live,
      body: { url: receiver.url(liveHook), enabled_events: ["mandate.declined", "mandate.activated"] }
    })
    expect(made.status, made.text).toBe(201)
    await live.request("POST", "/webhook-endpoints", {
      key: m.test,
      body: { url: receiver.url(testHook), enabled_events: ["*"] }
    })
    const customer = await F.customer(live, { balance: 0 })
    const created = await live.request("POST", "/mandates", { key: m.live, body: F.mandateBody() })
    expect(created.body.status).toBe("INITIATED")
    const challenge = await live.request("POST", `/approvals/mandates/${created.body.id}/challenge`, {
      body: { phone: customer.phone }
    })
    const notes = await live.ops("GET", `/ops/customers/${customer.id}/notifications`)
    const code = notes.body.find((n: any) => n.data.challenge_id === challenge.body.challenge_id).data.code
    const declined = await live.request("POST", `/approvals/mandates/${created.body.id}/decline`, {
      body: { challenge_id: challenge.body.challenge_id, otp: code }
    })
    expect(declined.status, declined.text).toBe(200)
    const [got] = await waitFor(liveHook, 1)
    expect(R.verifies(made.body.secret, got!)).toBe(true)
    expect(JSON.parse(got!.body)).toMatchObject({
      type: "mandate.declined",
      livemode: true,
      data: { object: { id: created.body.id, status: "DECLINED" } }
    })
    await new Promise((r) => setTimeout(r, 300))
    expect(at(testHook)).toHaveLength(0)
    expect(at(liveHook)).toHaveLength(1)
  })
})
