/**
 * A small wallet core speaking the connector protocol, in memory, for testing the conformance suite
 * itself: correct by default, and broken one rule at a time by a named fault.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Connector from "@laari/core/wallet/Connector"
import { Either, Schema } from "effect"
import { Temporal } from "temporal-polyfill"

export const faults = {
  "no-auth": "takes any token",
  "no-request-id": "does not carry the Request-Id back",
  "no-tombstones": "a cancel of an unknown id records nothing",
  "double-post": "a repeat posts again and answers 201",
  "quiet-double-post": "a repeat answers the first answer but moves the money again",
  "refusal-moves": "a refusal for want of balance takes what the wallet holds all the same",
  "cancelled-moves": "a POST after its cancel answers cancelled but moves the money",
  "no-conflict": "an id reused with another body answers the first answer",
  "cancel-cancels-posted": "a cancel of a posted transfer answers cancelled",
  "cancel-refused-cancels": "a cancel of a refused transfer answers cancelled",
  "refusals-forgotten": "a refusal is not stored: GET says 404",
  "ignores-frozen": "a frozen wallet pays",
  "balance-first": "decides the balance before the limit",
  "reversals-overdraw": "a reversal takes the paying wallet below zero",
  "no-paging": "the whole day in one page",
  "page-overlap": "each next page starts with the last transfer of the page before",
  "drops-reversals": "the statement leaves reversals out",
  "fractional-seconds": "posted_at with milliseconds",
  "crash-on-bad-body": "a body that does not decode is a 500",
  "slow-concurrent": "two sends at once both post"
} as const
export type Fault = keyof typeof faults

interface WalletState {
  readonly wallet: Connector.Wallet
  balance: number
}

interface Stored {
  readonly body: string
  readonly request: Connector.TransferRequest
  readonly status: number
  readonly answer: Connector.TransferAnswer
}

export interface FakeCore {
  readonly url: string
  readonly token: string
  readonly setup: {
    payer: string
    merchant: string
    fee: string
    frozen: string
    blocked: string
    limited: string
    empty: string
  }
  readonly balance: (id: string) => number
  readonly close: () => Promise<void>
}

const wallet = (id: string, phone: string, status: Connector.WalletStatus, limit: number | null) => ({
  wallet: { id, phone, status, limit, time_zone: "Indian/Maldives" },
  balance: 0
})

const decodeRequest = Schema.decodeUnknownEither(Connector.TransferRequest)
const uuid = /^[0-9a-f-]{36}$/

export const start = async (fault?: Fault): Promise<FakeCore> => {
  const token = "fake-core-token"
  const wallets = new Map<string, WalletState>([
    ["payer", { ...wallet("payer", "+9607000001", "active", null), balance: 1_000_000 }],
    ["merchant", wallet("merchant", "+9607000002", "active", null)],
    ["fee", wallet("fee", "+9607000003", "active", null)],
    ["frozen", { ...wallet("frozen", "+9607000004", "frozen", null), balance: 1000 }],
    ["blocked", { ...wallet("blocked", "+9607000005", "blocked", null), balance: 1000 }],
    ["limited", { ...wallet("limited", "+9607000006", "active", 500), balance: 100 }],
    ["empty", wallet("empty", "+9607000007", "active", null)]
  ])
  const transfers = new Map<string, Stored>()
  const tombstones = new Set<string>()
  const ledger: Array<Connector.StatementItem> = []

  const now = () => {
    const at = Temporal.Now.instant().toZonedDateTimeISO("Indian/Maldives")
    const text = at.toString({ smallestUnit: "second", timeZoneName: "never" })
    return fault === "fractional-seconds" ? text.replace(/(\d{2}:\d{2}:\d{2})/, "$1.123") : text
  }

  const decide = (request: Connector.TransferRequest): Connector.RefusalReason | undefined => {
    const from = wallets.get(request.from)
    if (from === undefined) return "blocked_by_rules"
    if (from.wallet.status === "frozen" && fault !== "ignores-frozen") return "wallet_frozen"
    if (from.wallet.status === "blocked") return "blocked_by_rules"
    if (fault === "balance-first" && from.balance < request.amount) return "insufficient_balance"
    if (from.wallet.limit !== null && request.amount > from.wallet.limit) return "wallet_limit"
    if (from.balance < request.amount && !(fault === "reversals-overdraw" && request.kind === "reversal"))
      return "insufficient_balance"
    return undefined
  }

  /** Moves the money; `listed`: and lists the transfer in the statement. */
  const postTransfer = (request: Connector.TransferRequest, listed = true) => {
    const credit = (id: string, amount: number) => {
      const w = wallets.get(id)
      if (w !== undefined) w.balance += amount
    }
    credit(request.from, -request.amount)
    credit(request.to, request.amount - (request.fee?.amount ?? 0))
    if (request.fee !== null) credit(request.fee.to, request.fee.amount)
    const posted_at = now()
    if (listed) ledger.push({ ...request, posted_at })
    return posted_at
  }

  /** `unseen`: the id was looked up before a pause, and was unknown then. */
  const handle = (req: IncomingMessage, body: string, unseen: boolean): readonly [number, unknown] => {
    const url = new URL(req.url ?? "/", "http://core")
    const error = (status: number, code: Connector.ErrorCode, message: string) =>
      [status, { code, message }] as const
    if (fault !== "no-auth" && req.headers.authorization !== `Bearer ${token}`)
      return error(401, "unauthorized", "a missing or wrong token")
    const parts = url.pathname.split("/").filter((p) => p !== "")
    if (req.method === "GET" && parts[0] === "wallets") {
      const found =
        parts.length === 2
          ? wallets.get(decodeURIComponent(parts[1]!))
          : [...wallets.values()].find((w) => w.wallet.phone === url.searchParams.get("phone"))
      return found === undefined ? error(404, "not_found", "no such wallet") : [200, found.wallet]
    }
    if (req.method === "POST" && url.pathname === "/transfers") {
      let json: unknown
      try {
        json = JSON.parse(body)
      } catch {
        json = undefined
      }
      const decoded = decodeRequest(json)
      if (Either.isLeft(decoded))
        return fault === "crash-on-bad-body"
          ? [500, { oops: true }]
          : error(400, "invalid_request", "does not decode")
      const request = decoded.right
      if (tombstones.has(request.id)) {
        if (fault === "cancelled-moves") postTransfer(request, false)
        return [200, { id: request.id, status: "cancelled" }]
      }
      const stored = transfers.get(request.id)
      if (stored !== undefined && fault !== "double-post" && !unseen) {
        if (stored.body !== JSON.stringify(request) && fault !== "no-conflict")
          return error(409, "conflict", "another body")
        if (fault === "quiet-double-post" && stored.status === 201) postTransfer(request, false)
        return [stored.status === 201 ? 200 : stored.status, stored.answer]
      }
      const reason = decide(request)
      if (reason !== undefined) {
        if (fault === "refusal-moves" && request.from === "empty") {
          const from = wallets.get(request.from)!
          postTransfer({ ...request, amount: from.balance, fee: null }, false)
        }
        const answer = { id: request.id, status: "refused", reason } as const
        if (fault !== "refusals-forgotten")
          transfers.set(request.id, { body: JSON.stringify(request), request, status: 422, answer })
        return [422, answer]
      }
      const answer = { id: request.id, status: "posted", posted_at: postTransfer(request) } as const
      transfers.set(request.id, { body: JSON.stringify(request), request, status: 201, answer })
      return [201, answer]
    }
    if (req.method === "POST" && parts[0] === "transfers" && parts[2] === "cancel") {
      const stored = transfers.get(parts[1]!)
      if (stored?.status === 201)
        return [200, { status: fault === "cancel-cancels-posted" ? "cancelled" : "posted" }]
      if (stored?.status === 422)
        return [200, { status: fault === "cancel-refused-cancels" ? "cancelled" : "refused" }]
      if (fault !== "no-tombstones") tombstones.add(parts[1]!)
      return [200, { status: "cancelled" }]
    }
    if (req.method === "GET" && url.pathname === "/transfers") {
      const day = url.searchParams.get("posted_on") ?? ""
      if (!Schema.is(Connector.PostedOn)(day)) return error(400, "invalid_request", "posted_on")
      const items = ledger
        .filter((i) => i.posted_at.slice(0, 10) === day)
        .filter((i) => fault !== "drops-reversals" || i.kind === "payment")
        .sort((a, b) =>
          a.posted_at < b.posted_at ? -1 : a.posted_at > b.posted_at ? 1 : a.id < b.id ? -1 : 1
        )
      const start = Number(url.searchParams.get("cursor") ?? "0")
      const size = fault === "no-paging" ? items.length : 100
      const end = start + size
      const next = end < items.length ? String(fault === "page-overlap" ? end - 1 : end) : null
      return [200, { transfers: items.slice(start, end), next_cursor: next }]
    }
    if (req.method === "GET" && parts[0] === "transfers" && parts.length === 2) {
      const id = parts[1]!
      if (!uuid.test(id)) return error(404, "not_found", "no such transfer")
      if (tombstones.has(id)) return [200, { id, status: "cancelled" }]
      const stored = transfers.get(id)
      if (stored === undefined) return error(404, "not_found", "no such transfer")
      const { id: _, status: __, ...rest } = stored.answer as Record<string, unknown>
      return [200, { ...stored.request, ...rest, status: stored.answer.status }]
    }
    return error(404, "not_found", "no such route")
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (body += chunk))
    req.on("end", () => {
      const reply = (unseen = false) => {
        const [status, answer] = handle(req, body, unseen)
        const headers: Record<string, string> = { "content-type": "application/json" }
        const requestId = req.headers["request-id"]
        if (fault !== "no-request-id" && typeof requestId === "string") headers["request-id"] = requestId
        res.writeHead(status, headers).end(JSON.stringify(answer))
      }
      // Looks the id up, then pauses before posting, as a core without a lock on the id would.
      if (fault === "slow-concurrent" && req.method === "POST" && req.url === "/transfers") {
        const id = /"id":"([^"]+)"/.exec(body)?.[1]
        if (id !== undefined && !transfers.has(id)) {
          setTimeout(() => reply(true), 20)
          return
        }
      }
      reply()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    setup: {
      payer: "payer",
      merchant: "merchant",
      fee: "fee",
      frozen: "frozen",
      blocked: "blocked",
      limited: "limited",
      empty: "empty"
    },
    balance: (id) => wallets.get(id)?.balance ?? 0,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
