/**
 * The HTTP edge: limits that hold before the app runs (`Http/Edge.ts`), body checks before HttpApi
 * decodes (`Http/Middleware.ts`), and start and stop of the real process (`bin.ts`). The edge alone is
 * tested in this process; the rest against `pnpm start`'s entry point in a child process, on a fresh
 * PostgreSQL database with `DATABASE_URL`, else on PGlite in a temporary directory.
 */
import { Effect, Exit, Scope } from "effect"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import * as Net from "node:net"
import { availableParallelism } from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Edge from "../../src/Http/Edge.js"
import * as ProcessDatabase from "../support/ProcessDatabase.js"
import * as ServerProcess from "../support/ServerProcess.js"
import { OpsToken } from "../support/TestServer.js"

const MiB = 1024 * 1024
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const challengePath = "/approvals/mandates/00000000-0000-4000-8000-000000000000/challenge"

interface Answer {
  readonly status: number
  readonly connection: string | undefined
  readonly requestId: string | undefined
  readonly retryAfter: string | undefined
  readonly body: string
}
/** An answer, or the error code of a request that got none (`ECONNRESET`, `TIMEOUT`, ...). */
type Outcome = Answer | { readonly error: string }

const isAnswer = (o: Outcome): o is Answer => "status" in o

/** One request on its own connection; `write` sends the body (the request is ended by it or here). */
const send = (
  port: number,
  options: {
    readonly method?: string
    readonly path: string
    readonly headers?: Http.OutgoingHttpHeaders
    readonly body?: string
    readonly write?: (req: Http.ClientRequest) => void
    readonly timeoutMs?: number
  }
): Promise<Outcome> =>
  new Promise((resolve) => {
    const req = Http.request({
      host: "127.0.0.1",
      port,
      method: options.method ?? "GET",
      path: options.path,
      headers: options.headers,
      agent: false
    })
    const timer = setTimeout(() => {
      resolve({ error: "TIMEOUT" })
      req.destroy()
    }, options.timeoutMs ?? 20_000)
    req.on("response", (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (s: string) => (body += s))
      res.on("end", () => {
        clearTimeout(timer)
        resolve({
          status: res.statusCode!,
          connection: res.headers.connection,
          requestId: res.headers["request-id"] as string | undefined,
          retryAfter: res.headers["retry-after"],
          body
        })
        // A client answered before it sent all its body stops and hangs up, as a real one would.
        req.destroy()
      })
    })
    req.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resolve({ error: e.code ?? e.message })
    })
    if (options.write !== undefined) options.write(req)
    else req.end(options.body)
  })

/** `send`, and when its outcome came (`Date.now()`). */
const timed = async (port: number, options: Parameters<typeof send>[1]) => {
  const outcome = await send(port, options)
  return { outcome, at: Date.now() }
}

/** Writes `total` bytes of JSON whitespace as fast as the socket takes them, stopping at an answer. */
const stream = (total: number) => (req: Http.ClientRequest) => {
  const chunk = Buffer.alloc(64 * 1024, 0x20)
  let written = 0
  let answered = false
  req.once("response", () => (answered = true))
  req.once("error", () => (answered = true))
  const pump = () => {
    while (!answered && written < total) {
      written += chunk.length
      if (!req.write(chunk)) return
    }
    if (!answered) req.end()
  }
  req.on("drain", pump)
  pump()
}

/** A raw connection that writes `text`; resolves with all the server wrote once it closes. */
const raw = (port: number, text: string) => {
  const socket = Net.connect(port, "127.0.0.1")
  // A reset shows as an empty reply.
  socket.on("error", () => {})
  socket.write(text)
  const reply = new Promise<string>((resolve) => {
    let received = ""
    socket.on("data", (b) => (received += b.toString()))
    socket.on("close", () => resolve(received))
  })
  return { socket, reply }
}

/**
 * A raw connection that sends `head` then chunks of a chunked body, up to `total` bytes, as fast as the
 * socket takes them, and goes on after an answer comes (as a careless client would): what the server took
 * shows in how much could be written. Resolves when the socket closes, or when sending stalled for 3 s.
 */
const keepSending = (port: number, head: string, total: number) =>
  new Promise<{ readonly reply: string; readonly writtenAtAnswer: number; readonly written: number }>(
    (resolve) => {
      const socket = Net.connect(port, "127.0.0.1")
      const piece = Buffer.alloc(64 * 1024, 0x20)
      const chunk = Buffer.concat([
        Buffer.from(`${piece.length.toString(16)}\r\n`),
        piece,
        Buffer.from("\r\n")
      ])
      let reply = ""
      let written = 0
      let writtenAtAnswer = -1
      let stall: NodeJS.Timeout | undefined
      const done = () => {
        clearTimeout(stall)
        socket.destroy()
        resolve({ reply, writtenAtAnswer, written })
      }
      const pump = () => {
        clearTimeout(stall)
        stall = setTimeout(done, 3_000)
        while (!socket.destroyed && written < total) {
          written += piece.length
          if (!socket.write(chunk)) return
        }
      }
      socket.on("data", (b) => {
        if (writtenAtAnswer < 0) writtenAtAnswer = written
        reply += b.toString()
      })
      socket.on("error", () => {})
      socket.on("close", done)
      socket.on("drain", pump)
      socket.write(head)
      pump()
    }
  )

describe("the edge alone", () => {
  const listen = async (options: Partial<Edge.Options> = {}) => {
    const server = Edge.createServer({ maxBodyBytes: 1000, ...options })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    return { server, port: (server.address() as Net.AddressInfo).port }
  }
  const close = (server: Http.Server) => new Promise((r) => server.close(r))
  /** Closes a server whose refused connections linger (2 s, for their clients to read the answer) at once. */
  const closeNow = (server: Http.Server) => {
    const closed = close(server)
    server.closeAllConnections()
    return closed
  }

  it("holds requests that arrive before the app listens, then hands them over", async () => {
    const { server, port } = await listen()
    const answers = Promise.all(Array.from({ length: 10 }, () => send(port, { path: "/" })))
    await sleep(300)
    const attachedAt = Date.now()
    server.on("request", (_req: Http.IncomingMessage, res: Http.ServerResponse) => res.end("app"))
    const outcomes = await answers
    expect(outcomes.map((o) => isAnswer(o) && o.body)).toEqual(Array(10).fill("app"))
    expect(Date.now() - attachedAt).toBeLessThan(5_000)
    await close(server)
  })

  it("answers 503 when the app does not listen in time", async () => {
    const { server, port } = await listen({ attachTimeoutMs: 200 })
    const outcome = await send(port, { path: "/" })
    // Told when to come back, like every other 503.
    expect(outcome).toMatchObject({ status: 503, connection: "close", retryAfter: "1" })
    // Refused by the edge, and still with a `Request-Id` like every other answer.
    expect((outcome as Answer).requestId).toMatch(/^req_[0-9a-f]{32}$/)
    // The documented 503 body, with its code, like every other 503.
    expect(JSON.parse((outcome as Answer).body)).toEqual({
      message: expect.stringMatching(/starting/),
      code: "SERVICE_UNAVAILABLE"
    })
    await close(server)
  })

  it("refuses a declared body over the limit without handing it to the app", async () => {
    const { server, port } = await listen()
    let seen = 0
    server.on("request", (_req: Http.IncomingMessage, res: Http.ServerResponse) => {
      seen++
      res.end()
    })
    const outcome = await send(port, {
      method: "POST",
      path: "/",
      headers: { "content-type": "application/json", "content-length": "1001" },
      write: stream(1001)
    })
    expect(outcome).toMatchObject({ status: 413, connection: "close" })
    expect((outcome as Answer).requestId).toMatch(/^req_[0-9a-f]{32}$/)
    expect(JSON.parse((outcome as Answer).body)).toEqual({
      message: "The request body is larger than 1000 bytes",
      code: "BODY_TOO_LARGE"
    })
    // `Expect: 100-continue` is refused before the client sends the body.
    const expecting = await send(port, {
      method: "POST",
      path: "/",
      headers: { "content-length": String(10 * MiB), expect: "100-continue" },
      write: (req) =>
        req.on("continue", () => req.destroy(new Error("100 Continue for a body over the limit")))
    })
    expect(expecting).toMatchObject({ status: 413 })
    expect(seen).toBe(0)
    await close(server)
  })

  it("answers a chunked body over the limit 413 with its message, handing the app no byte past it", async () => {
    const { server, port } = await listen()
    let received = 0
    server.on("request", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
      req.on("data", (b: Buffer) => (received += b.length))
      req.on("end", () => res.end("read"))
    })
    const outcome = await send(port, {
      method: "POST",
      path: "/",
      headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
      write: stream(10 * MiB)
    })
    expect(outcome).toMatchObject({ status: 413, connection: "close" })
    expect(JSON.parse((outcome as Answer).body)).toEqual({
      message: "The request body is larger than 1000 bytes",
      code: "BODY_TOO_LARGE"
    })
    expect(received).toBeLessThanOrEqual(1000)
    await closeNow(server)
  })

  it("closes the connection of an answer sent before its body, reading no more of it", async () => {
    const { server, port } = await listen({ maxBodyBytes: 1000 * MiB })
    server.on("request", (_req: Http.IncomingMessage, res: Http.ServerResponse) => {
      res.statusCode = 401
      res.end("no")
    })
    const head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    const sent = await keepSending(port, head, 500 * MiB)
    expect(sent.reply).toMatch(/^HTTP\/1.1 401.*connection: close.*no$/is)
    // Without the edge's guard Node reads ("dumps") the whole body to keep the connection alive.
    expect(sent.written).toBeLessThan(50 * MiB)
    await close(server)
  })

  it("while draining answers a request on an idle keep-alive connection 503 instead of resetting it", async () => {
    const { server, port } = await listen({ drainTimeoutMs: 5_000 })
    server.on("request", (_req: Http.IncomingMessage, res: Http.ServerResponse) => res.end("ok"))
    const first = raw(port, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
    await sleep(200)
    const closed = close(server)
    // The client sends its next request on the connection it was told to keep.
    first.socket.write("GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
    const reply = await first.reply
    expect(reply).toMatch(/^HTTP\/1.1 200.*ok.*HTTP\/1.1 503.*shutting down/s)
    await closed
  })

  it("keeps a refusal behind the answer to an earlier pipelined request", async () => {
    const { server, port } = await listen()
    server.on("request", (_req: Http.IncomingMessage, res: Http.ServerResponse) => {
      setTimeout(() => res.end("first"), 200)
    })
    const pipelined =
      "GET / HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n"
    expect(await raw(port, pipelined).reply).toMatch(/^HTTP\/1.1 200.*first.*HTTP\/1.1 413/s)
    await close(server)
  })

  it("closes a connection whose headers never finish", async () => {
    const { server, port } = await listen({
      headersTimeoutMs: 500,
      requestTimeoutMs: 1_000,
      checkIntervalMs: 100
    })
    const started = Date.now()
    const reply = await raw(port, "GET / HTTP/1.1\r\nHost: x\r\n").reply
    expect(reply).toMatch(/^HTTP\/1.1 408/)
    expect(Date.now() - started).toBeLessThan(10_000)
    await close(server)
  })

  it("on close answers new requests 503, lets in-flight ones finish, closes stragglers", async () => {
    const { server, port } = await listen({ drainTimeoutMs: 500 })
    // Closing begins once the server holds all three connections and both requests, not after a guessed
    // sleep: on a loaded machine they can take longer than any fixed wait to arrive.
    let connections = 0
    let requests = 0
    server.on("connection", () => connections++)
    server.on("request", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
      requests++
      if (req.url === "/slow") setTimeout(() => res.end("done"), 300)
      // "/never" is never answered
    })
    const slow = send(port, { path: "/slow" })
    const never = send(port, { path: "/never" })
    // A request whose headers are not complete yet when closing begins.
    const late = raw(port, "GET /late HTTP/1.1\r\nHost: x\r\n")
    while (connections < 3 || requests < 2) await sleep(10)
    const closed = close(server)
    late.socket.write("\r\n")
    const lateReply = await late.reply
    expect(lateReply).toMatch(/^HTTP\/1.1 503/)
    expect(await slow).toMatchObject({ status: 200, connection: "close", body: "done" })
    // Past the deadline an unanswered request is told so, not reset.
    expect(await never).toMatchObject({ status: 503, connection: "close" })
    await closed
  })
})

/** One server process's environment: a fresh PostgreSQL database, else PGlite in a temporary directory. */
const serverEnv = async (scope: Scope.Scope): Promise<Record<string, string>> => ({
  LAARI_OPS_TOKEN: OpsToken,
  LAARI_RATE_LIMIT: "0",
  ...(await ProcessDatabase.env(scope, "laari-edge-"))
})

describe("the server process", () => {
  const scope = Effect.runSync(Scope.make())
  let server: ServerProcess.ServerProcess
  let port: number
  // The SIGTERM tests stop a server of their own: all three start at once, not one after another.
  const ownServers: Partial<Record<"quiet" | "busy", ServerProcess.ServerProcess>> = {}
  const startOne = async () => ServerProcess.start({ env: await serverEnv(scope) })

  beforeAll(async () => {
    const started = await Promise.allSettled([startOne(), startOne(), startOne()])
    const failed = started.find((s) => s.status === "rejected")
    const servers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []))
    if (failed !== undefined) {
      for (const s of servers) s.kill()
      throw failed.reason
    }
    ;[server, ownServers.quiet, ownServers.busy] = servers
    port = server.port
  }, 90_000)

  afterAll(async () => {
    server?.kill()
    ownServers.quiet?.kill()
    ownServers.busy?.kill()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 30_000)

  const alive = async () => expect(await send(port, { path: "/healthz" })).toMatchObject({ status: 200 })
  const mib = (n: number) => `${Math.round(n / MiB)} MiB`
  /** Prints the process's memory against `before`; its peak must rise by less than 100 MiB (Linux). */
  const checkMemory = (label: string, before: ReturnType<ServerProcess.ServerProcess["memory"]>) => {
    const after = server.memory()
    if (before === undefined || after === undefined) return
    console.log(
      `${label}; RSS before ${mib(before.rss)} (peak ${mib(before.peak)}), peak after ${mib(after.peak)}`
    )
    expect(after.peak - before.peak).toBeLessThan(100 * MiB)
  }

  it("answers a 600 MB body declared by Content-Length with 413 at once, in bounded memory", async () => {
    const before = server.memory()
    // Several times: a client still sending when the answer comes must get it, not a reset.
    let slowest = 0
    for (let i = 0; i < 10; i++) {
      const started = Date.now()
      const outcome = await send(port, {
        method: "POST",
        path: challengePath,
        headers: { "content-type": "application/json", "content-length": String(600 * MiB) },
        write: stream(600 * MiB)
      })
      slowest = Math.max(slowest, Date.now() - started)
      expect(outcome).toMatchObject({ status: 413, connection: "close" })
      expect(JSON.parse((outcome as Answer).body).message).toMatch(/larger than 1048576 bytes/)
    }
    expect(slowest).toBeLessThan(10_000)
    await alive()
    checkMemory(`600 MB declared body, 10 times: 413 within ${slowest} ms`, before)
  }, 60_000)

  it("answers a chunked body past the limit 413 with its message, in bounded memory", async () => {
    const before = server.memory()
    for (const path of [challengePath, "/mandates"]) {
      const outcome = await send(port, {
        method: "POST",
        path,
        headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
        write: stream(path === "/mandates" ? 10 * MiB : 50 * MiB)
      })
      // An API route checks the key before it reads a byte of the body (this test sends none).
      if (path === "/mandates") {
        expect(outcome, path).toMatchObject({ status: 401, connection: "close" })
        continue
      }
      expect(outcome, path).toMatchObject({ status: 413, connection: "close" })
      expect(JSON.parse((outcome as Answer).body).message).toMatch(/larger than 1048576 bytes/)
    }
    await alive()
    checkMemory("50 MB and 10 MB chunked bodies: 413", before)
  }, 30_000)

  it("answers an API call with a wrong key 401 before its body has arrived", async () => {
    // 100 bytes of a declared 500,000: a server that read the body before the key would wait for the rest.
    for (const auth of ["Authorization: Bearer sk_test_wrong\r\n", ""]) {
      const { socket, reply } = raw(
        port,
        `POST /mandates HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 500000\r\n\r\n{"reference":"${"x".repeat(80)}`
      )
      // The answer's first bytes, not the connection's end: the body's rest never comes.
      const answer = await Promise.race([
        new Promise<string>((resolve) => socket.once("data", (b) => resolve(b.toString()))),
        reply,
        sleep(10_000).then(() => "no answer in 10 s")
      ])
      socket.destroy()
      expect(answer, auth).toMatch(/^HTTP\/1.1 401/)
    }
    await alive()
  }, 60_000)

  it("answers /graphql without a key 401 before reading a huge chunked body", async () => {
    const head =
      "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    const sent = await keepSending(port, head, 540 * MiB)
    console.log(
      `/graphql without a key: answered after ${mib(sent.writtenAtAnswer)}, ${mib(sent.written)} sent`
    )
    expect(sent.reply).toMatch(/^HTTP\/1.1 401/)
    expect(sent.reply).toMatch(/connection: close/i)
    // Socket buffers hold some megabytes; the server reads none of the body past them.
    expect(sent.written).toBeLessThan(50 * MiB)
    await alive()
  }, 60_000)

  it("answers hostile bodies with a documented 4xx and no stack trace", async () => {
    const post = (contentType: string | undefined, body: string) =>
      send(port, {
        method: "POST",
        path: challengePath,
        headers: contentType === undefined ? {} : { "content-type": contentType },
        body
      })
    const cases: ReadonlyArray<readonly [string | undefined, string, number, RegExp]> = [
      ["application/json", `${"[".repeat(3000)}${"]".repeat(3000)}`, 400, /deeper than 64/],
      ["application/json", `${'{"a":'.repeat(3000)}1${"}".repeat(3000)}`, 400, /deeper than 64/],
      ["multipart/form-data; boundary=x", "--x\r\n\r\nabc\r\n--x--", 415, /application\/json/],
      ["text/plain", "phone", 415, /application\/json/],
      [undefined, '{"phone":"+9607771234"}', 415, /application\/json/],
      ["application/json", '{"phone":', 400, /not valid JSON/],
      // Brackets inside strings (after an escaped quote too) do not count; the body goes on to the handler,
      // which refuses the phone (longer than 32).
      ["application/json; charset=utf-8", `{"phone":"\\"${"[{".repeat(100)}"}`, 422, /phone/],
      ["application/json", '{"phone":"+9607771234"}', 404, /not found/]
    ]
    for (const [contentType, body, status, text] of cases) {
      const outcome = await post(contentType, body)
      expect(outcome, `${contentType} ${body.slice(0, 20)}`).toMatchObject({ status })
      expect(JSON.parse((outcome as Answer).body).message).toMatch(text)
    }
    // Endpoints without a body need no content type.
    expect(await send(port, { path: "/qr/00000000-0000-4000-8000-000000000000.png" })).toMatchObject({
      status: 404
    })
    expect(await send(port, { path: "/openapi.json" })).toMatchObject({ status: 200 })
    expect(await send(port, { method: "POST", path: "/ops/clock/advance" })).toMatchObject({ status: 401 })
    await alive()
    expect(server.stdout()).not.toMatch(/unhandled defect|RangeError| {4}at /)
    expect(server.stderr()).toBe("")
  }, 30_000)

  // Quiet, and with a busy-looping process per core (a loaded machine, where an in-flight request was
  // seen reset at the drain deadline). Each stops a server of its own.
  it.each(["quiet", "busy"] as const)(
    "on SIGTERM lets in-flight requests finish, refuses new ones, and exits 0 quietly (%s)",
    { timeout: 180_000 },
    async (load) => {
      const own = ownServers[load]!
      const hogs =
        load === "busy"
          ? Array.from({ length: availableParallelism() }, () =>
              spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" })
            )
          : []
      try {
        const body = JSON.stringify({ phone: "+9607771234" })
        // Requests in flight when the signal comes: the server has taken each (its `100 Continue` says
        // so), and their bodies arrive only afterwards.
        const finish: Array<() => void> = []
        const taken: Array<Promise<void>> = []
        const inFlight = Array.from({ length: 5 }, () =>
          timed(own.port, {
            method: "POST",
            path: challengePath,
            headers: {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body),
              expect: "100-continue"
            },
            write: (req) => {
              taken.push(new Promise((resolve) => req.once("continue", resolve)))
              req.flushHeaders()
              finish.push(() => req.end(body))
            },
            timeoutMs: 60_000
          })
        )
        await Promise.all(taken)
        const signalled = Date.now()
        process.kill(own.pid, "SIGTERM")
        // The bodies follow half a second after the signal, whatever the probes below take on a loaded
        // machine: a request whose body comes only after the drain deadline is answered 503, by design.
        const sent = sleep(500).then(() => {
          for (const f of finish) f()
          return Date.now() - signalled
        })
        // Not ready any more: new connections are refused (or answered 503) while those requests run.
        let probe: Outcome = {
          status: 200,
          connection: undefined,
          requestId: undefined,
          retryAfter: undefined,
          body: ""
        }
        // Within seconds on a quiet machine; the bound is for a busy one.
        const notReadyBy = Date.now() + 30_000
        while (Date.now() < notReadyBy && isAnswer(probe) && probe.status === 200) {
          await sleep(100)
          probe = await send(own.port, { path: "/readyz", timeoutMs: 15_000 })
        }
        // A connection the kernel had queued when the listener closed is reset, not refused: to the client
        // it is the same (no request of it was read or answered), and no listener can close without it.
        expect(String(isAnswer(probe) ? probe.status : probe.error)).toMatch(
          /^(503|ECONNREFUSED|ECONNRESET)$/
        )
        const bodiesAfter = await sent
        // Each is answered, never reset: by the app (404: no such challenge), or, only once the drain
        // deadline has passed (a loaded machine may not have read the body by then), by the edge's 503.
        for (const { outcome, at } of await Promise.all(inFlight)) {
          if (isAnswer(outcome) && outcome.status === 503 && at - signalled >= Edge.defaults.drainTimeoutMs)
            expect(outcome).toMatchObject({ connection: "close", retryAfter: expect.any(String) })
          else expect(outcome).toMatchObject({ status: 404, connection: "close" })
        }
        const exit = await own.exited
        const ms = Date.now() - signalled
        console.log(
          `SIGTERM with 5 requests in flight (${load}): bodies sent ${bodiesAfter} ms after the signal, exit ${exit.code} ${ms} ms after it`
        )
        expect(exit).toEqual({ code: 0, signal: null })
        expect(ms).toBeLessThan(30_000)
        expect(own.stderr()).toBe("")
      } finally {
        for (const hog of hogs) hog.kill()
        own.kill()
      }
    }
  )
})

describe("start-up", () => {
  const scope = Effect.runSync(Scope.make())
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 30_000)

  it("answers every request from the first millisecond, and exits 0 on SIGINT", async () => {
    const env = await serverEnv(scope)
    const port = await ServerProcess.freePort()
    const spawned = Date.now()
    const server = await ServerProcess.spawnServer({ env, port })
    let refused = 0
    // Each client retries while the port is closed; once connected, its request must be answered.
    const client = async (path: string, method = "GET", body?: string) => {
      for (;;) {
        const outcome = await send(port, {
          method,
          path,
          ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body }),
          timeoutMs: 20_000
        })
        if (isAnswer(outcome) || outcome.error !== "ECONNREFUSED") return outcome
        refused++
        await sleep(20)
      }
    }
    try {
      const outcomes = await Promise.all([
        ...Array.from({ length: 8 }, () => client("/healthz")),
        ...Array.from({ length: 8 }, () => client(challengePath, "POST", '{"phone":"+9607771234"}'))
      ])
      const ms = Date.now() - spawned
      console.log(
        `start-up: all answered ${ms} ms after spawning; ${refused} connections refused before that`
      )
      expect(outcomes.map((o) => (isAnswer(o) ? o.status : o.error))).toEqual([
        ...Array(8).fill(200),
        ...Array(8).fill(404)
      ])
      const exit = await server.stop({ signal: "SIGINT" })
      expect(exit).toEqual({ code: 0, signal: null })
      expect(server.stderr()).toBe("")
    } finally {
      server.kill()
    }
  }, 180_000)
})
