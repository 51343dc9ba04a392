/**
 * The Node HTTP server under the app (`NodeHttpServer.layer(() => Edge.createServer(...), ...)`): the
 * limits that must hold before any Effect code runs.
 *
 * - Headers are bounded in size and count, and every wait on a client is timed: a slow client cannot
 *   hold a socket for long (headers 10 s, the whole request 30 s, an idle keep-alive 5 s).
 * - A body declared (`Content-Length`) larger than `maxBodyBytes` gets `413` and `Connection: close`
 *   without a byte of it being read. A body of unknown length (chunked) is counted as it arrives, and
 *   once past the limit gets the same `413`, before the app sees the byte that passed it.
 * - An answer that goes out before its request's body has been read (a `401` before a large body) closes
 *   the connection instead of reading the rest of the body to keep it alive.
 * - A request that arrives before the app listens (the socket opens first) waits for it, up to
 *   `attachTimeoutMs`, instead of hanging forever: Node drops requests nobody listens to.
 * - `close()` drains: new requests get `503` (on an idle keep-alive connection too: it is not closed
 *   under a request the client may already have sent), in-flight requests finish with
 *   `Connection: close`, and after `drainTimeoutMs` the remaining sockets are closed. (A refused
 *   connection stays open for up to `LingerMs`, 2 s, so that its client can read the answer.)
 */
import * as Http from "node:http"
import type * as Net from "node:net"
import { Errors } from "@laari/core"
import * as Answers from "./Answers.js"
import * as Problems from "./Problems.js"
import * as RequestId from "./RequestId.js"
import * as RetryAfter from "./RetryAfter.js"

export interface Options {
  /** Largest body accepted, in bytes; a larger `Content-Length` is answered `413` at once. */
  readonly maxBodyBytes: number
  /** Largest request line and headers together, in bytes; over it Node answers `431`. */
  readonly maxHeaderSize: number
  /** Headers past this count are dropped. */
  readonly maxHeadersCount: number
  /** Longest to receive the headers; then Node answers `408` and closes. */
  readonly headersTimeoutMs: number
  /** Longest to receive the whole request, body included; then `408` and closed. */
  readonly requestTimeoutMs: number
  /** Longest an idle keep-alive connection stays open. */
  readonly keepAliveTimeoutMs: number
  /** Longest a socket may see no traffic at all (a client that stops reading the response). */
  readonly socketTimeoutMs: number
  /** How often Node checks the header and request timeouts. */
  readonly checkIntervalMs: number
  /** Longest a request that arrived before the app listens waits for it; then `503`. */
  readonly attachTimeoutMs: number
  /** Longest `close()` lets in-flight requests run before closing their sockets. */
  readonly drainTimeoutMs: number
}

export const defaults: Omit<Options, "maxBodyBytes"> = {
  maxHeaderSize: 16 * 1024,
  maxHeadersCount: 100,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  socketTimeoutMs: 60_000,
  checkIntervalMs: 1_000,
  attachTimeoutMs: 30_000,
  drainTimeoutMs: 10_000
}

/** How long a refused connection stays open for the client to read the answer. */
const LingerMs = 2_000

type Refusal = Problems.BodyTooLarge | Errors.ServiceUnavailable

const shuttingDown = () => new Errors.ServiceUnavailable({ message: "This service is shutting down" })

/** An error the edge answers by itself, encoded by its schema (`Answers`): its status, body and headers. */
const refusal = (error: Refusal) => {
  const answer = Answers.edge.answer(error)!
  const status = answer.status
  const body = JSON.stringify(answer.body)
  const headers = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    connection: "close",
    [RequestId.Header]: RequestId.make(),
    // A draining process's 503 says when to come back, as the app's do (`RetryAfter`).
    ...(status === 503 ? { "retry-after": String(RetryAfter.Seconds) } : {})
  }
  return { status, body, headers }
}

/**
 * Answers `status` with a JSON message and closes the connection, reading none of the body. The answer
 * goes onto the socket directly: after a `Connection: close` response Node destroys the socket at once,
 * and a client still sending its body then gets a reset instead of the answer. Here the socket only
 * half-closes; unread, the body soon stops the client by backpressure, and the socket is destroyed after
 * `LingerMs`, by when the client has the answer.
 */
const refuseAndLinger = (req: Http.IncomingMessage, error: Refusal): void => {
  const socket = req.socket
  if (!socket.writable) return
  const { status, body, headers } = refusal(error)
  const head = [`HTTP/1.1 ${status} ${Http.STATUS_CODES[status]}`]
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`)
  socket.end(`${head.join("\r\n")}\r\n\r\n${req.method === "HEAD" ? "" : body}`)
  setTimeout(() => socket.destroy(), LingerMs).unref()
}

/** The same answer through Node's response, which keeps it behind earlier (pipelined) responses. */
const refuseInTurn = (res: Http.ServerResponse, error: Refusal): void => {
  if (res.headersSent) return
  const { status, body, headers } = refusal(error)
  res.writeHead(status, headers)
  res.end(body)
}

const declaredLength = (req: Http.IncomingMessage): number | undefined => {
  const header = req.headers["content-length"]
  return header === undefined ? undefined : Number(header)
}

/** A body whose length is not declared: it ends when its last chunk says so. */
const isChunked = (req: Http.IncomingMessage): boolean =>
  req.headers["content-length"] === undefined && req.headers["transfer-encoding"] !== undefined

interface Waiting {
  readonly req: Http.IncomingMessage
  readonly res: Http.ServerResponse
  readonly timer: NodeJS.Timeout
}

class EdgeServer extends Http.Server {
  /** Requests that arrived before the app's 'request' listener. */
  private readonly waiting = new Set<Waiting>()
  /** Responses the app is working on, and their sockets, to close those connections when draining. */
  private readonly inFlight = new Map<Http.ServerResponse, Net.Socket>()
  private draining = false
  private gaveUp = false

  constructor(private readonly options: Options) {
    super({
      maxHeaderSize: options.maxHeaderSize,
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      connectionsCheckingInterval: options.checkIntervalMs
    })
    this.maxHeadersCount = options.maxHeadersCount
    this.keepAliveTimeout = options.keepAliveTimeoutMs
    this.setTimeout(options.socketTimeoutMs)
    // With a listener Node no longer sends `100 Continue` by itself: a body too large is refused first.
    this.on("checkContinue", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
      if (!this.draining && !this.tooLarge(req)) res.writeContinue()
      this.admit(req, res)
    })
    // 'newListener' fires before the listener is added: hand the waiting requests over just after.
    this.on("newListener", (event: string | symbol) => {
      if (event === "request") setImmediate(() => this.release())
    })
  }

  /** Node emits every request here; the app's listener sees only those the edge admits. */
  override emit(event: string | symbol, ...args: Array<unknown>): boolean {
    // (The cast only picks the overload that takes any event.)
    if (event !== "request") return super.emit(event as string, ...args)
    this.admit(args[0] as Http.IncomingMessage, args[1] as Http.ServerResponse)
    return true
  }

  override close(callback?: (error?: Error) => void): this {
    this.draining = true
    const waiting = [...this.waiting]
    this.waiting.clear()
    for (const { req, res, timer } of waiting) {
      clearTimeout(timer)
      this.refuse(req, res, shuttingDown())
    }
    // Node keeps a keep-alive connection open after its response: ask each in-flight one to close.
    for (const res of this.inFlight.keys()) if (!res.headersSent) res.setHeader("connection", "close")
    const deadline = setTimeout(() => this.giveUp(), this.options.drainTimeoutMs).unref()
    // Stops listening and closes idle connections; the callback runs once every connection is closed.
    super.close((error) => {
      clearTimeout(deadline)
      callback?.(error)
    })
    return this
  }

  /**
   * Node closes idle keep-alive connections when closing; but "idle" only means no request parsed yet, and
   * a client may already have sent one (a busy process has not read it): it would be reset. While
   * draining they stay open; a request on one is answered `503` with `Connection: close`, and an unused
   * one ends at its advertised keep-alive timeout, or at the drain deadline.
   */
  override closeIdleConnections(): void {
    if (!this.draining || this.gaveUp) super.closeIdleConnections()
  }

  /**
   * At the drain deadline: each request still unanswered gets `503` rather than a reset (with an
   * `Idempotency-Key` its client may retry it safely), and the sockets close once it could be read.
   */
  private giveUp(): void {
    this.gaveUp = true
    for (const [res, socket] of this.inFlight) {
      if (!res.headersSent && socket.writable) {
        const { status, body, headers } = refusal(shuttingDown())
        const head = [`HTTP/1.1 ${status} ${Http.STATUS_CODES[status]}`]
        for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`)
        socket.end(`${head.join("\r\n")}\r\n\r\n${body}`)
      }
    }
    setTimeout(() => this.closeAllConnections(), LingerMs).unref()
  }

  private tooLarge(req: Http.IncomingMessage): boolean {
    const length = declaredLength(req)
    return length !== undefined && !(length <= this.options.maxBodyBytes)
  }

  private admit(req: Http.IncomingMessage, res: Http.ServerResponse): void {
    if (this.draining) this.refuse(req, res, shuttingDown())
    else if (this.tooLarge(req)) this.refuse(req, res, Problems.BodyTooLarge.of(this.options.maxBodyBytes))
    else if (this.listenerCount("request") > 0) this.dispatch(req, res)
    else this.wait(req, res)
  }

  private wait(req: Http.IncomingMessage, res: Http.ServerResponse): void {
    const timer = setTimeout(() => {
      this.waiting.delete(entry)
      this.refuse(
        req,
        res,
        new Errors.ServiceUnavailable({ message: "This service is starting; retry shortly" })
      )
    }, this.options.attachTimeoutMs).unref()
    const entry: Waiting = { req, res, timer }
    this.waiting.add(entry)
    res.once("close", () => {
      clearTimeout(timer)
      this.waiting.delete(entry)
    })
  }

  private dispatch(req: Http.IncomingMessage, res: Http.ServerResponse): void {
    this.inFlight.set(res, req.socket)
    res.once("close", () => this.inFlight.delete(res))
    if (isChunked(req)) this.guardBody(req, res)
    super.emit("request", req, res)
  }

  /**
   * A body of undeclared length as Node's parser hands it over (`push`): counted, so the chunk that passes
   * the limit is answered `413` here; the app's own cut-off would destroy the socket before its answer
   * could go out. And an answer sent before the body has all arrived (a `401`) closes the connection:
   * Node would otherwise read the rest of the body, however long, to keep it alive. (A declared body is
   * at most `maxBodyBytes`, which Node may read.)
   */
  private guardBody(req: Http.IncomingMessage, res: Http.ServerResponse): void {
    const max = this.options.maxBodyBytes
    let bytes = 0
    let stopped = false
    const push = req.push.bind(req)
    // Returning false stops Node reading the socket: the client is held back by backpressure.
    req.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
      if (stopped) return false
      if (chunk !== null && chunk !== undefined) {
        bytes += (chunk as Buffer).length
        if (bytes > max) {
          stopped = true
          if (res.headersSent) req.socket.destroy()
          else refuseAndLinger(req, Problems.BodyTooLarge.of(max))
          return false
        }
      }
      return push(chunk, encoding)
    }
    const writeHead = res.writeHead
    res.writeHead = ((...args: Parameters<typeof res.writeHead>) => {
      if (!req.complete && !stopped) {
        stopped = true
        res.setHeader("connection", "close")
        // Node reads ("dumps") an unread body after the answer; read none, and linger as a refusal does.
        Object.assign(req, { _dump: () => {} })
        const socket = req.socket
        Object.assign(socket, {
          destroySoon: () => {
            socket.end()
            setTimeout(() => socket.destroy(), LingerMs).unref()
          }
        })
      }
      return writeHead.apply(res, args)
    }) as typeof res.writeHead
  }

  /** Refuses at once, unless an earlier request on the same connection still waits for its answer. */
  private refuse(req: Http.IncomingMessage, res: Http.ServerResponse, error: Refusal): void {
    const socket = req.socket
    const earlier =
      [...this.inFlight.values()].includes(socket) || [...this.waiting].some((w) => w.req.socket === socket)
    if (earlier) refuseInTurn(res, error)
    else refuseAndLinger(req, error)
  }

  /** Hands the waiting requests to the app, now listening. */
  private release(): void {
    if (this.listenerCount("request") === 0) return
    for (const entry of this.waiting) {
      clearTimeout(entry.timer)
      this.waiting.delete(entry)
      if (!entry.res.writableEnded && !entry.res.destroyed) this.dispatch(entry.req, entry.res)
    }
  }
}

/** A Node HTTP server with the edge's limits; `options` override `defaults`. */
export const createServer = (options: Partial<Options> & Pick<Options, "maxBodyBytes">): Http.Server =>
  new EdgeServer({ ...defaults, ...options })
