/**
 * Several laari hosts behind one HAProxy (the checked-in `deploy/haproxy.cfg`), for the failover suite.
 * Each host is a real server process (the compiled build, `ServerProcess`) on its own port, reaching the
 * database through TCP proxies of its own (one per database node), so that one host can be cut off from
 * the database while the other is not. The hosts share what every production host shares: the database
 * URL, the operator token, the master key and the notification secret.
 */
import { Effect, Exit, Scope } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as ServerProcess from "./ServerProcess.js"
import * as TcpProxy from "./TcpProxy.js"
import * as TestServer from "./TestServer.js"

const root = Path.resolve(fileURLToPath(import.meta.url), "../../../../..")
export const HaproxyConfig = Path.join(root, "deploy/haproxy.cfg")

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface Host {
  readonly name: string
  readonly port: number
  /** The running process; `undefined` while killed. */
  readonly process: () => ServerProcess.ServerProcess | undefined
  readonly baseUrl: string
}

export interface Hosts {
  /** HAProxy's address: where the clients go. */
  readonly baseUrl: string
  readonly hosts: ReadonlyArray<Host>
  /** `kill -9` of every process of host `i` (its supervisor and the processes under it). */
  readonly killHost: (i: number) => Promise<void>
  /** Starts host `i` again on its port; resolves once it is ready. */
  readonly restartHost: (i: number) => Promise<void>
  /** Host `i`'s connections to the database go silent and new ones are never answered (a cut cable). */
  readonly cut: (i: number) => Promise<void>
  /** Ends the cut: the silent connections are closed, new ones go through. */
  readonly heal: (i: number) => Promise<void>
  /** Waits until HAProxy sees every running host up (a `/readyz` through it per host). */
  readonly waitAllUp: (timeoutMs?: number) => Promise<void>
  readonly haproxyOutput: () => string
  readonly stop: () => Promise<void>
}

/**
 * A host's multi-host `DATABASE_URL`: the formation's URI (`pg_autoctl show uri`, naming every data node,
 * two or three) with each node's `127.0.0.1:port` replaced by the host's proxy to it (`proxyPorts`, in the
 * order of `nodes`). Fails loudly should the URI not name a node, rather than leave a host a node short.
 */
export const formationUrl = (
  uri: string,
  nodes: ReadonlyArray<{ readonly port: number }>,
  proxyPorts: ReadonlyArray<number>
): string =>
  nodes.reduce((url, n, i) => {
    const address = new RegExp(`127\\.0\\.0\\.1:${n.port}(?=[,/])`)
    if (!address.test(url)) throw new Error(`LaariHosts: ${uri} does not name the node on port ${n.port}`)
    return url.replace(address, `127.0.0.1:${proxyPorts[i]}`)
  }, uri)

/** Every process under `pid`, deepest first, then `pid`. */
const tree = (pid: number): Array<number> => {
  let children: Array<number> = []
  try {
    children = execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number)
  } catch {
    // no children
  }
  return [...children.flatMap(tree), pid]
}

/**
 * Starts `count` hosts (one after the other: the first migrates and seeds) and HAProxy in front of them.
 * `database` are the nodes' `host:port`s; `url` builds a host's `DATABASE_URL` from the ports of its
 * proxies (the same order), so the caller chooses the single-host or the multi-host form.
 */
export const start = async (options: {
  readonly count: number
  readonly database: ReadonlyArray<{ readonly host: string; readonly port: number }>
  readonly url: (proxyPorts: ReadonlyArray<number>) => string
  readonly env?: Record<string, string>
}): Promise<Hosts> => {
  const scope = Effect.runSync(Scope.make())
  const haproxyPort = await ServerProcess.freePort()
  const baseUrl = `http://127.0.0.1:${haproxyPort}`
  const shared = {
    LAARI_OPS_TOKEN: TestServer.OpsToken,
    LAARI_RATE_LIMIT: "0",
    LAARI_CLOCK: "manual",
    LAARI_PROCESSES: "2",
    LAARI_WEBHOOK_ALLOW_PRIVATE: "true",
    LAARI_BASE_URL: baseUrl,
    LAARI_MASTER_KEY: randomBytes(32).toString("base64"),
    LAARI_NOTIFY_SECRET: `whsec_${randomBytes(24).toString("base64")}`,
    ...options.env
  }
  const states: Array<{
    readonly name: string
    readonly port: number
    readonly env: Record<string, string>
    readonly proxies: ReadonlyArray<TcpProxy.TcpProxy>
    process: ServerProcess.ServerProcess | undefined
  }> = []
  let haproxy: ChildProcess | undefined
  let haproxyOutput = ""

  const stop = async () => {
    haproxy?.kill("SIGKILL")
    await Promise.all(states.map((s) => s.process?.stop({ timeoutMs: 10_000 })))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }

  const waitAllUp = async (timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs
    const running = states.filter((s) => s.process !== undefined).length
    // Round robin: `running` answers in a row of 200 means each running host answered ready once.
    let inARow = 0
    while (Date.now() < deadline) {
      const status = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(5_000) }).then(
        (r) => r.status,
        () => 0
      )
      inARow = status === 200 ? inARow + 1 : 0
      if (inARow >= running * 2) return
      await sleep(status === 200 ? 50 : 250)
    }
    throw new Error(`HAProxy did not see the ${running} hosts up within ${timeoutMs} ms\n${haproxyOutput}`)
  }

  try {
    for (let i = 0; i < options.count; i++) {
      const proxies: Array<TcpProxy.TcpProxy> = []
      for (const node of options.database)
        proxies.push(await Effect.runPromise(Scope.extend(TcpProxy.make(node), scope)))
      const env = { ...shared, DATABASE_URL: options.url(proxies.map((p) => p.port)) }
      const process = await ServerProcess.start({ env })
      states.push({ name: `laari${i + 1}`, port: process.port, env, proxies, process })
    }
    haproxy = spawn("/usr/sbin/haproxy", ["-db", "-f", HaproxyConfig], {
      env: {
        PATH: "/usr/sbin:/usr/bin:/bin",
        LAARI_BIND: `127.0.0.1:${haproxyPort}`,
        ...Object.fromEntries(states.map((s, i) => [`LAARI_HOST_${i + 1}`, `127.0.0.1:${s.port}`]))
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    haproxy.stdout!.setEncoding("utf8").on("data", (s: string) => (haproxyOutput += s))
    haproxy.stderr!.setEncoding("utf8").on("data", (s: string) => (haproxyOutput += s))
    await waitAllUp()
  } catch (error) {
    await stop()
    throw error
  }

  const proxiesOf = (i: number) => states[i]!.proxies
  return {
    baseUrl,
    hosts: states.map((s) => ({
      name: s.name,
      port: s.port,
      baseUrl: `http://127.0.0.1:${s.port}`,
      process: () => s.process
    })),
    killHost: async (i) => {
      const s = states[i]!
      const p = s.process
      if (p === undefined) return
      for (const pid of tree(p.pid)) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // gone already
        }
      }
      await p.exited
      s.process = undefined
    },
    restartHost: async (i) => {
      const s = states[i]!
      s.process = await ServerProcess.start({ env: s.env, port: s.port })
    },
    cut: (i) => Effect.runPromise(Effect.forEach(proxiesOf(i), (p) => p.freeze, { discard: true })),
    heal: (i) =>
      Effect.runPromise(
        Effect.forEach(proxiesOf(i), (p) => Effect.zipRight(p.stop, p.start), { discard: true })
      ),
    waitAllUp,
    haproxyOutput: () => haproxyOutput,
    stop
  }
}
