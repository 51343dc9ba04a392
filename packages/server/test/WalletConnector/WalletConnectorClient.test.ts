/**
 * laari's client of the wallet connector, against a tiny core on 127.0.0.1 that answers each case: every
 * answer the protocol defines is classified as what it says (posted, refused, cancelled, not taken, a
 * conflict), and everything else (a delay past the timeout, a reset socket, a 5xx, a 401, garbage, an
 * answer about another id, a 404 that is not the core's) is `Unknown`, never a refusal or a success.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type { Connector } from "@laari/core"
import { Effect, Either, Option } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as Client from "../../src/WalletConnector/Client.js"

const Token = "wallet_core_token_0123"
const TimeoutMs = 300
const id = "0b9f3c2e-4a1d-4c7e-9f21-5d6a7b8c9d0e"
const other = "11111111-2222-4333-8444-555555555555"
const postedAt = "2026-12-02T14:05:09+05:00"

const request: Connector.TransferRequest = {
  id,
  environment: "live",
  from: "w-customer",
  to: "w-merchant",
  amount: 10_000,
  fee: { to: "w-laari", amount: 150 },
  memo: "Coffee",
  kind: "payment"
}

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void

let server: Server
let url: string
let handler: Handler
const seen: Array<Seen> = []

const json =
  (status: number, body: unknown, raw?: string): Handler =>
  (_req, res) => {
    res.writeHead(status, { "content-type": "application/json" })
    res.end(raw ?? JSON.stringify(body))
  }

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => {
      body += chunk
    })
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body })
      handler(req, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

beforeEach(() => {
  seen.length = 0
})

const run = <A, E>(f: (client: Client.WalletConnectorClientService) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.either(
      Effect.flatMap(Client.WalletConnectorClient, f).pipe(
        Effect.provide(Client.layer({ url: `${url}/`, token: Token, timeoutMs: TimeoutMs })),
        Effect.provide(FetchHttpClient.layer)
      )
    )
  )

/** The outcome, or the typed failure. */
const outcome = async <A, E>(f: (client: Client.WalletConnectorClientService) => Effect.Effect<A, E>) =>
  Either.merge(await run(f)) as A | E

const tagOf = (u: unknown) => (u as { _tag: string })._tag

const notFound = json(404, { code: "not_found", message: "no such thing" })

/** Answers that are no answer of the protocol: each must leave the outcome unknown. */
const broken: ReadonlyArray<readonly [string, Handler]> = [
  [
    "a delay past the timeout",
    (_req, res) =>
      setTimeout(() => json(201, { id, status: "posted", posted_at: postedAt })(_req, res), TimeoutMs + 400)
  ],
  ["a reset socket", (req) => req.socket.destroy()],
  ["a 500", json(500, { code: "internal", message: "boom" })],
  ["a 503 with HTML", json(503, undefined, "<html>Service Unavailable</html>")],
  ["a 401", json(401, { code: "unauthorized", message: "wrong token" })],
  ["a 400", json(400, { code: "invalid_request", message: "amount: must be 1 or more" })],
  ["garbage JSON with a 201", json(201, undefined, "{not json")],
  ["a 201 that is no posting", json(201, { id, status: "refused", reason: "insufficient_balance" })],
  ["a 200 with an unknown status", json(200, { id, status: "pending" })],
  ["a 422 with an unknown reason", json(422, { id, status: "refused", reason: "moon_phase" })],
  ["a 201 about another transfer", json(201, { id: other, status: "posted", posted_at: postedAt })],
  ["a 404", notFound],
  ["a 409 whose body is not the protocol's", json(409, undefined, "Conflict")]
]

describe("transfer", () => {
  it("is sent with the bearer token, a fresh Request-Id each call, and the request as the protocol spells it", async () => {
    handler = json(201, { id, status: "posted", posted_at: postedAt })
    await outcome((c) => c.transfer(request))
    await outcome((c) => c.transfer(request))
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ["POST", "/transfers"],
      ["POST", "/transfers"]
    ])
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${Token}`)
    const ids = seen.map((s) => s.headers["request-id"])
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(ids[0]).not.toBe(ids[1])
    expect(JSON.parse(seen[0]!.body)).toEqual(request)
  })

  it("classifies each answer of the protocol as what it says", async () => {
    handler = json(201, { id, status: "posted", posted_at: postedAt })
    expect(await outcome((c) => c.transfer(request))).toEqual(new Client.Posted({ id, postedAt }))
    handler = json(200, { id, status: "posted", posted_at: postedAt })
    expect(await outcome((c) => c.transfer(request))).toEqual(new Client.Posted({ id, postedAt }))
    handler = json(200, { id, status: "cancelled" })
    expect(await outcome((c) => c.transfer(request))).toEqual(new Client.Cancelled({ id }))
    for (const reason of [
      "insufficient_balance",
      "wallet_limit",
      "wallet_frozen",
      "blocked_by_rules"
    ] as const) {
      handler = json(422, { id, status: "refused", reason })
      expect(await outcome((c) => c.transfer(request))).toEqual(new Client.Refused({ id, reason }))
    }
  })

  it("a 409 conflict is its own typed failure, not an outcome", async () => {
    handler = json(409, { code: "conflict", message: "another body" })
    const result = await run((c) => c.transfer(request))
    expect(Either.isLeft(result) && result.left).toMatchObject({
      _tag: "TransferConflict",
      id,
      detail: "another body"
    })
  })

  for (const [name, answer] of broken)
    it(`${name} is Unknown, carrying the Request-Id it was sent with`, async () => {
      handler = answer
      const started = Date.now()
      const result = await run((c) => c.transfer(request))
      expect(Either.isRight(result), "an outcome, not a failure").toBe(true)
      const got = Either.merge(result)
      expect(tagOf(got)).toBe("Unknown")
      expect((got as Client.Unknown).requestId).toBe(seen.at(-1)?.headers["request-id"])
      expect(Date.now() - started).toBeLessThan(TimeoutMs + 300)
    })
})

describe("status", () => {
  const asked = { ...request }
  it("classifies posted, refused, cancelled, and 404 not_found as not taken", async () => {
    handler = json(200, { ...asked, status: "posted", posted_at: postedAt })
    expect(await outcome((c) => c.status(id))).toEqual(new Client.Posted({ id, postedAt }))
    handler = json(200, { ...asked, status: "refused", reason: "wallet_frozen" })
    expect(await outcome((c) => c.status(id))).toEqual(new Client.Refused({ id, reason: "wallet_frozen" }))
    handler = json(200, { id, status: "cancelled" })
    expect(await outcome((c) => c.status(id))).toEqual(new Client.Cancelled({ id }))
    handler = notFound
    expect(await outcome((c) => c.status(id))).toEqual(new Client.NotTaken({ id }))
    expect(seen.at(-1)).toMatchObject({ method: "GET", url: `/transfers/${id}` })
  })

  it("a 404 that is not the core's, a 500, a timeout, garbage or another id is Unknown", async () => {
    for (const answer of [
      json(404, undefined, "<html>Not Found</html>"),
      json(500, {}),
      broken[0]![1],
      json(200, undefined, "]["),
      json(200, { ...asked, id: other, status: "posted", posted_at: postedAt }),
      json(200, { ...asked, status: "posted" })
    ]) {
      handler = answer
      expect(tagOf(await outcome((c) => c.status(id)))).toBe("Unknown")
    }
  })
})

describe("cancel", () => {
  it("classifies its final answer", async () => {
    handler = json(200, { status: "cancelled" })
    expect(await outcome((c) => c.cancel(id))).toEqual(new Client.Cancelled({ id }))
    expect(seen.at(-1)).toMatchObject({ method: "POST", url: `/transfers/${id}/cancel` })
    handler = json(200, { status: "posted" })
    expect(await outcome((c) => c.cancel(id))).toEqual(new Client.Posted({ id, postedAt: null }))
    handler = json(200, { status: "refused" })
    expect(await outcome((c) => c.cancel(id))).toEqual(new Client.Refused({ id, reason: null }))
  })

  it("anything else is Unknown: a 404, a 500, a reset, garbage", async () => {
    for (const answer of [notFound, json(500, {}), broken[1]![1], json(200, { status: "maybe" })]) {
      handler = answer
      expect(tagOf(await outcome((c) => c.cancel(id)))).toBe("Unknown")
    }
  })
})

describe("wallets", () => {
  const wallet = {
    id: "w 1",
    phone: "+9607771234",
    status: "active",
    limit: null,
    time_zone: "Indian/Maldives"
  }

  it("a wallet by id or by phone; 404 not_found is none", async () => {
    handler = json(200, wallet)
    expect(await run((c) => c.wallet("w 1"))).toEqual(Either.right(Option.some(wallet)))
    expect(seen.at(-1)?.url).toBe("/wallets/w%201")
    expect(await run((c) => c.walletByPhone("+9607771234"))).toEqual(Either.right(Option.some(wallet)))
    expect(new URL(seen.at(-1)!.url, url).searchParams.get("phone")).toBe("+9607771234")
    handler = notFound
    expect(await run((c) => c.wallet("w 1"))).toEqual(Either.right(Option.none()))
  })

  it("a 500, a 401, a bad wallet or a timeout fails Unknown, never none", async () => {
    for (const answer of [
      json(500, {}),
      json(401, { code: "unauthorized", message: "no" }),
      json(200, { ...wallet, status: "closed" }),
      json(404, undefined, "Not Found"),
      broken[0]![1]
    ]) {
      handler = answer
      const result = await run((c) => c.wallet("w 1"))
      expect(Either.isLeft(result) && result.left._tag).toBe("Unknown")
    }
  })
})

describe("statement", () => {
  const page = {
    transfers: [{ id, from: "a", to: "b", amount: 100, fee: null, kind: "payment", posted_at: postedAt }],
    next_cursor: "c2"
  }

  it("asks for the day and the cursor, and decodes the page", async () => {
    handler = json(200, page)
    expect(await run((c) => c.statement("2026-12-02", "c1"))).toEqual(Either.right(page))
    const asked = new URL(seen.at(-1)!.url, url)
    expect([asked.pathname, asked.searchParams.get("posted_on"), asked.searchParams.get("cursor")]).toEqual([
      "/transfers",
      "2026-12-02",
      "c1"
    ])
    await run((c) => c.statement("2026-12-02"))
    expect(new URL(seen.at(-1)!.url, url).searchParams.has("cursor")).toBe(false)
  })

  it("a page that does not decode, or a 500, fails Unknown", async () => {
    for (const answer of [json(200, { ...page, next_cursor: undefined }), json(500, {})]) {
      handler = answer
      const result = await run((c) => c.statement("2026-12-02"))
      expect(Either.isLeft(result) && result.left._tag).toBe("Unknown")
    }
  })
})
