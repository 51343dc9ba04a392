/**
 * Online guessing at secrets over real HTTP: wrong client secrets at `/oauth/token`
 * and wrong operator tokens at `/ops` lock their client address out (`429` with `Retry-After`, in each
 * endpoint's error shape), a client id guessed at from many addresses is locked out too, the right
 * secret from another address still works, and the lock-out ends when its time is up.
 */
import { Auth } from "@laari/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as RateLimit from "../../src/Http/RateLimit.js"
import * as Fixtures from "../support/Fixtures.js"
import * as FromAddress from "../support/FromAddress.js"
import * as TestServer from "../support/TestServer.js"

type Answer = FromAddress.Answer

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("guessing at secrets", { timeout: 120_000 }, () => {
  let server: TestServer.LocalTestServer
  let port: number
  let client: { readonly client_id: string; readonly client_secret: string }

  beforeAll(async () => {
    // The limits are on, as in production (the suites turn them off).
    server = await TestServer.start({ config: { rateLimit: 100 } })
    port = Number(new URL(server.baseUrl).port)
    const merchant = await Fixtures.merchant(server)
    const res = await server.ops("POST", `/ops/merchants/${merchant.id}/oauth-clients`, {
      environment: "test",
      scopes: Auth.allScopes
    })
    client = res.body
  }, 120_000)
  afterAll(() => server?.close())

  /** One request from `from` (a loopback address of its own: another client address to the server). */
  const call = (from: string, method: string, path: string, headers: Record<string, string>, body?: string) =>
    FromAddress.request(port, from, method, path, headers, body)

  const token = (from: string, id: string, secret: string) =>
    call(
      from,
      "POST",
      "/oauth/token",
      { "content-type": "application/x-www-form-urlencoded" },
      new URLSearchParams({
        grant_type: "client_credentials",
        client_id: id,
        client_secret: secret
      }).toString()
    )

  const ops = (from: string, token: string) =>
    call(from, "GET", "/ops/merchants", { authorization: `Bearer ${token}` })

  /** Waits out a refusal's `Retry-After`. */
  const waitOut = async (answer: Answer) => {
    const seconds = Number(answer.headers["retry-after"])
    expect(seconds).toBeGreaterThanOrEqual(1)
    await sleep(seconds * 1000 + 200)
  }

  it("locks an address out of /oauth/token after wrong secrets; the right one from elsewhere works", async () => {
    const wrong = `${client.client_secret.slice(0, -4)}0000`
    const guesses = RateLimit.GuessesPerAddress.capacity
    for (let i = 0; i < guesses; i++)
      expect((await token("127.0.0.2", client.client_id, wrong)).status).toBe(401)
    // Past the limit every attempt from that address is refused, the right secret too.
    const refused = await token("127.0.0.2", client.client_id, client.client_secret)
    expect(refused.status).toBe(429)
    expect(refused.headers["retry-after"]).toMatch(/^[1-9]\d*$/)
    expect(refused.headers["cache-control"]).toBe("no-store")
    expect(refused.body).toEqual({
      error: "slow_down",
      error_description: expect.stringMatching(/retry after/)
    })
    // Another address with the right secret is not held back.
    expect((await token("127.0.0.3", client.client_id, client.client_secret)).status).toBe(200)
    // The lock-out ends.
    await waitOut(refused)
    expect((await token("127.0.0.2", client.client_id, client.client_secret)).status).toBe(200)
  })

  it("locks a client id out of /oauth/token after wrong secrets from many addresses", async () => {
    const id = "lci_test_000000000000000000000000"
    const capacity = RateLimit.GuessesPerClient.capacity
    // Spread over addresses, each under its own limit.
    for (let i = 0; i < capacity; i++)
      expect((await token(`127.0.1.${1 + (i % 10)}`, id, `guess-${i}`)).status).toBe(401)
    // Past the ceiling (and the little it refilled meanwhile), from addresses it never saw: refused.
    let refused: Answer | undefined
    for (let i = 1; i <= 10 && refused === undefined; i++) {
      const answer = await token(`127.0.2.${i}`, id, "guess")
      if (answer.status === 429) refused = answer
      else expect(answer.status).toBe(401)
    }
    expect(refused?.status).toBe(429)
    if (refused === undefined) return
    expect(refused.body.error).toBe("slow_down")
    // Another client is not held back.
    expect((await token("127.0.2.1", client.client_id, client.client_secret)).status).toBe(200)
  })

  it("a stranger guessing at a client from one address locks only that address out, never the client", async () => {
    // Far more than the client's ceiling, from one address: its own lock comes first.
    const started = Date.now()
    let tried = 0
    for (let i = 0; i < RateLimit.GuessesPerClient.capacity + 20; i++)
      if ((await token("127.0.5.1", client.client_id, `guess-${i}`)).status === 401) tried++
    const seconds = Math.ceil((Date.now() - started) / 1000)
    expect(tried).toBeLessThanOrEqual(RateLimit.GuessesPerAddress.capacity + seconds)
    // One more guess first takes what the address's bucket refilled since the last (a slow machine's
    // loop lasts seconds), so the right secret right after it meets the lock, not a fresh token.
    await token("127.0.5.1", client.client_id, "guess-last")
    expect((await token("127.0.5.1", client.client_id, client.client_secret)).status).toBe(429)
    expect((await token("127.0.5.2", client.client_id, client.client_secret)).status).toBe(200)
  })

  it("locks an address out of /ops after wrong operator tokens; the right one from elsewhere works", async () => {
    const guesses = RateLimit.GuessesPerAddress.capacity
    for (let i = 0; i < guesses; i++) expect((await ops("127.0.3.1", `ops_wrong_${i}`)).status).toBe(401)
    const refused = await ops("127.0.3.1", TestServer.OpsToken)
    expect(refused.status).toBe(429)
    expect(refused.headers["retry-after"]).toMatch(/^[1-9]\d*$/)
    expect(refused.body).toEqual({ message: expect.stringMatching(/retry after/), code: "RATE_LIMITED" })
    // `/metrics` takes the same token, under the same lock-out.
    const metrics = await call("127.0.3.1", "GET", "/metrics", {
      authorization: `Bearer ${TestServer.OpsToken}`
    })
    expect(metrics.status).toBe(429)
    expect((await ops("127.0.3.2", TestServer.OpsToken)).status).toBe(200)
    await waitOut(refused)
    expect((await ops("127.0.3.1", TestServer.OpsToken)).status).toBe(200)
  })

  it("counts only failures: the right secret, many times, locks nobody out", async () => {
    for (let i = 0; i < RateLimit.GuessesPerAddress.capacity * 2; i++) {
      expect((await ops("127.0.4.1", TestServer.OpsToken)).status).toBe(200)
      expect((await token("127.0.4.1", client.client_id, client.client_secret)).status).toBe(200)
    }
  })
})

/** Guesses sent at once, `width` at a time; the statuses in order. */
const burst = async (count: number, width: number, send: (i: number) => Promise<Answer>) => {
  const statuses: Array<number> = []
  for (let i = 0; i < count; i += width)
    statuses.push(
      ...(await Promise.all(Array.from({ length: Math.min(width, count - i) }, (_, j) => send(i + j)))).map(
        (a) => a.status
      )
    )
  return statuses
}

describe("guessing limits are a security control: they hold with LAARI_RATE_LIMIT=0", {
  timeout: 120_000
}, () => {
  let server: TestServer.LocalTestServer
  let port: number
  let client: { readonly client_id: string; readonly client_secret: string }

  beforeAll(async () => {
    // An operator whose gateway limits rates turns laari's rate limits off.
    server = await TestServer.start({ config: { rateLimit: 0 } })
    port = Number(new URL(server.baseUrl).port)
    const merchant = await Fixtures.merchant(server)
    const res = await server.ops("POST", `/ops/merchants/${merchant.id}/oauth-clients`, {
      environment: "test",
      scopes: Auth.allScopes
    })
    client = res.body
  }, 120_000)
  afterAll(() => server?.close())

  const token = (from: string, secret: string) =>
    FromAddress.request(
      port,
      from,
      "POST",
      "/oauth/token",
      { "content-type": "application/x-www-form-urlencoded" },
      new URLSearchParams({
        grant_type: "client_credentials",
        client_id: client.client_id,
        client_secret: secret
      }).toString()
    )

  /** At most the address's guesses and its refill were judged; every other answer is the lock-out. */
  const lockedAfterTheLimit = (statuses: ReadonlyArray<number>, started: number, wrong: number) => {
    const seconds = Math.ceil((Date.now() - started) / 1000)
    expect(statuses.filter((s) => s !== wrong && s !== 429)).toEqual([])
    const judged = statuses.filter((s) => s === wrong).length
    expect(judged).toBeGreaterThanOrEqual(RateLimit.GuessesPerAddress.capacity)
    expect(judged, `${judged} judged in ${seconds} s`).toBeLessThanOrEqual(
      RateLimit.GuessesPerAddress.capacity + seconds * RateLimit.GuessesPerAddress.perSecond
    )
  }

  it("200 wrong client secrets, 20 at a time, from one address: judged 10 (and the refill), then 429", async () => {
    const started = Date.now()
    const statuses = await burst(200, 20, (i) => token("127.0.6.1", `wrong-${i}`))
    lockedAfterTheLimit(statuses, started, 401)
    // The stranger locked their own address out, not the client: from its own address it gets tokens.
    expect((await token("127.0.6.1", client.client_secret)).status).toBe(429)
    expect((await token("127.0.6.2", client.client_secret)).status).toBe(200)
  })

  it("200 wrong operator tokens, 20 at a time, from one address: judged 10 (and the refill), then 429", async () => {
    const ops = (from: string, token: string) =>
      FromAddress.request(port, from, "GET", "/ops/merchants", { authorization: `Bearer ${token}` })
    const started = Date.now()
    const statuses = await burst(200, 20, (i) => ops("127.0.6.3", `ops_wrong_${i}`))
    lockedAfterTheLimit(statuses, started, 401)
    expect((await ops("127.0.6.3", TestServer.OpsToken)).status).toBe(429)
    expect((await ops("127.0.6.4", TestServer.OpsToken)).status).toBe(200)
  })
})
