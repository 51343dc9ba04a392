/**
 * A TCP proxy in front of PostgreSQL (127.0.0.1 only) that reads the client's side of the wire protocol
 * far enough to see a `COMMIT`, and cuts the connection exactly there: to stage a commit whose outcome
 * the client cannot know.
 *
 * `arm(mode, marker)`: the first connection that sends `marker` (an Idempotency-Key, which travels in a
 * Bind message of the transaction) has its next `COMMIT` cut:
 * - `before`: the COMMIT is never forwarded; both sockets close, and the server rolls back;
 * - `after`: the COMMIT is forwarded, the server's reply (up to its ReadyForQuery) is held back, and both
 *   sockets close: the transaction committed, and the client never hears so.
 * @effect/sql sends COMMIT as a simple Query message (`Q`, "COMMIT"); the Transactor on PostgreSQL sends
 * it in a batch after the last writes (`PgTransaction`), as a Parse message, or once the connection has
 * it prepared, as the Bind of that statement: all are cut. In `before`
 * mode the batch's writes went out before the cut but never their Sync, so the server rolls them back.
 */
import * as Net from "node:net"

export type Mode = "before" | "after"

export interface CommitCutProxy {
  readonly port: number
  /** Resolves once the cut is done. */
  readonly arm: (mode: Mode, marker: string) => Promise<void>
  readonly close: () => Promise<void>
}

/** Messages of the protocol sent before the startup message has no type byte. */
const SslRequest = 80877103
const GssRequest = 80877104

/** Whole messages at the front of `buffer`, and what is left. */
const split = (buffer: Buffer, typed: boolean) => {
  const messages: Array<{ readonly type: string; readonly body: Buffer; readonly raw: Buffer }> = []
  let at = 0
  const head = typed ? 1 : 0
  while (buffer.length - at >= head + 4) {
    const length = buffer.readInt32BE(at + head)
    const end = at + head + length
    if (buffer.length < end) break
    messages.push({
      type: typed ? String.fromCharCode(buffer[at]!) : "",
      body: buffer.subarray(at + head + 4, end),
      raw: buffer.subarray(at, end)
    })
    at = end
    if (!typed) break
  }
  return { messages, rest: buffer.subarray(at) }
}

/**
 * A simple Query `COMMIT`, the Parse of one (a batch of the Transactor: `PgBatch`), or the Bind of a
 * statement prepared as one (`PgPrepared`: a connection parses COMMIT once, by name). `prepared` holds
 * the connection's named statements, from its Parse messages: name, then text.
 */
const isCommit = (m: { readonly type: string; readonly body: Buffer }, prepared: Map<string, string>) => {
  let text: string | undefined
  if (m.type === "Q") text = m.body.toString("utf8").replace(/\0$/, "")
  else if (m.type === "P") {
    const [name, parsed] = m.body.toString("utf8").split("\0")
    if (name !== undefined && name !== "" && parsed !== undefined) prepared.set(name, parsed)
    text = parsed
  } else if (m.type === "B") {
    // Bind: the portal's name, then the statement's.
    const statement = m.body.toString("utf8").split("\0")[1]
    text = statement === undefined || statement === "" ? undefined : prepared.get(statement)
  }
  return text?.trim().toUpperCase() === "COMMIT"
}

export const make = (target: { readonly host: string; readonly port: number }): Promise<CommitCutProxy> =>
  new Promise((resolve) => {
    const sockets = new Set<Net.Socket>()
    let armed: { mode: Mode; marker: Buffer; done: () => void } | undefined
    const server = Net.createServer((client) => {
      const upstream = Net.connect(target.port, target.host)
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on("close", () => sockets.delete(s))
        s.on("error", () => s.destroy())
      }
      client.on("close", () => upstream.destroy())
      upstream.on("close", () => client.destroy())
      const cut = () => {
        client.destroy()
        upstream.destroy()
        const done = armed?.done
        armed = undefined
        done?.()
      }
      let pending: Buffer = Buffer.alloc(0)
      let started = false
      let marked = false
      const prepared = new Map<string, string>()
      // Set once the COMMIT to cut after went out: the server's bytes are held, up to ReadyForQuery.
      let holding: Buffer | undefined
      client.on("data", (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk])
        for (;;) {
          const { messages, rest } = split(pending, started)
          if (messages.length === 0) break
          pending = rest
          for (const m of messages) {
            if (!started) {
              const code = m.body.readInt32BE(0)
              started = code !== SslRequest && code !== GssRequest
            }
            if (armed !== undefined && !marked && m.raw.includes(armed.marker)) marked = true
            const commit = isCommit(m, prepared)
            if (armed !== undefined && marked && commit) {
              if (armed.mode === "before") return cut()
              holding = Buffer.alloc(0)
            }
            upstream.write(m.raw)
          }
        }
      })
      upstream.on("data", (chunk: Buffer) => {
        if (holding === undefined) return void client.write(chunk)
        holding = Buffer.concat([holding, chunk])
        // The reply is whole at its ReadyForQuery; until then, keep reading.
        if (split(holding, true).messages.some((m) => m.type === "Z")) cut()
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as Net.AddressInfo).port,
        arm: (mode, marker) =>
          new Promise<void>((done) => {
            armed = { mode, marker: Buffer.from(marker, "utf8"), done }
          }),
        close: () =>
          new Promise<void>((closed) => {
            for (const s of sockets) s.destroy()
            server.close(() => closed())
          })
      })
    )
  })
