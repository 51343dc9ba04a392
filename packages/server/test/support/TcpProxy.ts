/**
 * A TCP proxy in front of a database server, to stage outages: `stop` closes every connection and
 * refuses new ones (a crashed or stopped server), `start` listens again on the same port,
 * `blackhole` accepts connections that never answer (a network that drops packets), and `freeze` makes
 * the open connections go silent too, without closing them (a network that stops mid-conversation).
 */
import { Effect, type Scope } from "effect"
import * as net from "node:net"

export interface TcpProxy {
  readonly port: number
  readonly stop: Effect.Effect<void>
  readonly start: Effect.Effect<void>
  readonly blackhole: Effect.Effect<void>
  readonly freeze: Effect.Effect<void>
}

export const make = (target: {
  readonly host: string
  readonly port: number
}): Effect.Effect<TcpProxy, never, Scope.Scope> =>
  Effect.gen(function* () {
    const sockets = new Set<net.Socket>()
    const pairs = new Set<readonly [net.Socket, net.Socket]>()
    let mode: "forward" | "blackhole" = "forward"
    const track = (socket: net.Socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => socket.destroy())
    }
    const server = net.createServer((client) => {
      track(client)
      if (mode === "blackhole") return
      const upstream = net.connect(target.port, target.host)
      track(upstream)
      client.pipe(upstream).pipe(client)
      const pair = [client, upstream] as const
      pairs.add(pair)
      client.on("close", () => {
        pairs.delete(pair)
        upstream.destroy()
      })
      upstream.on("close", () => client.destroy())
    })
    const listen = (port: number) =>
      Effect.async<number>((resume) => {
        server.listen(port, "127.0.0.1", () =>
          resume(Effect.succeed((server.address() as net.AddressInfo).port))
        )
      })
    const close = Effect.async<void>((resume) => {
      for (const socket of sockets) socket.destroy()
      if (!server.listening) return resume(Effect.void)
      server.close(() => resume(Effect.void))
    })
    const port = yield* Effect.acquireRelease(listen(0), () => close)
    return {
      port,
      stop: close,
      start: Effect.suspend(() => {
        mode = "forward"
        return server.listening ? Effect.void : Effect.asVoid(listen(port))
      }),
      freeze: Effect.sync(() => {
        mode = "blackhole"
        for (const [client, upstream] of pairs) {
          client.unpipe(upstream)
          upstream.unpipe(client)
          client.pause()
          upstream.pause()
        }
      }),
      blackhole: Effect.zipRight(
        close,
        Effect.suspend(() => {
          mode = "blackhole"
          return Effect.asVoid(listen(port))
        })
      )
    }
  })
