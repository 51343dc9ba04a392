/**
 * `LAARI_PROCESSES`: N server processes on one port (node:cluster), since a server keeps nothing of its
 * own between requests and background work is claimed with `SKIP LOCKED`. The primary only supervises:
 * it starts the first process (which migrates and seeds), then the rest once the first is ready,
 * replaces one that dies, relays the processes' metrics to the one that takes a scrape
 * (`ClusterMetrics`), and on SIGTERM or SIGINT stops them all and waits for them.
 *
 * One process only with embedded PGlite (one process may open its data directory) and with the manual
 * clock (each process would keep its own time).
 */
import cluster, { type Worker } from "node:cluster"
import os from "node:os"
import * as ClusterMetrics from "./Observability/ClusterMetrics.js"
import * as Logs from "./Platform/Logs.js"
import { ConfigExitCode } from "./Startup.js"
import * as Turns from "./Background/Turns.js"

export interface Plan {
  readonly processes: number
  /** Why fewer processes run than were asked for, if so. */
  readonly reason?: string
}

/** How many processes to run: `LAARI_PROCESSES` (default: the number of cores), where allowed. */
export const plan = (env: NodeJS.ProcessEnv): Plan => {
  const raw = env.LAARI_PROCESSES
  const asked = raw === undefined || raw === "" ? os.availableParallelism() : Number(raw)
  if (!Number.isInteger(asked) || asked < 1)
    throw new Error(`LAARI_PROCESSES must be a whole number of processes, 1 or more (got "${raw}")`)
  if (asked === 1) return { processes: 1 }
  if (!env.DATABASE_URL)
    return { processes: 1, reason: "embedded PGlite is opened by one process; set DATABASE_URL for more" }
  if (env.LAARI_CLOCK === "manual") return { processes: 1, reason: "the manual clock runs in one process" }
  return { processes: asked }
}

/** Set in every process but the first: it neither seeds nor prints the start-up keys. */
export const FollowerEnv = "LAARI_FOLLOWER"

export const isFollower = (env: NodeJS.ProcessEnv) => env[FollowerEnv] === "1"

/** Whether this process is one of several under the supervisor. */
export const isWorker = () => cluster.isWorker

/** What the first process tells the supervisor once it has seeded: the others may start. */
const ReadyMessage = "laari:ready"

/** In the first process: start-up is done (`Readiness`). */
export const announceReady = () => process.send?.({ type: ReadyMessage })

/**
 * The young generation of a serving process: semi-spaces of 16 MiB, whatever the supervisor itself runs
 * with (`pnpm start` gives node 4 MiB, for the idle RSS of one process: BENCHMARKS.md "Idle RSS"). With
 * 4 MiB a process under charges collected its young generation 4 times as often, for 2.4 times the pause
 * time in all (98 scavenges and 728 ms against 26 and 305 ms in one half-rate run), most of the
 * requests over 50 ms overlapping one.
 */
export const YoungGenerationMiB = 16

/**
 * How far V8 lets the old generation grow past what its last full collection kept: 100% (a factor of 2).
 * Left to V8 (a factor up to 4 when collections look cheap), a process under charges keeps the requests'
 * promoted garbage: 215-310 MiB RSS after each of three 60 s spread runs, while a forced collection leaves
 * about 46 MiB of live heap. With 100%: 154-160 MiB after each of three, at the same rate. Tighter costs the
 * renewals, whose batches keep more alive: 100,000 of them took 64.7-68.3 s left to V8, 68.5-73.3 s at
 * 100%, 74-79 s at 50% and 83-90 s at 25% (BENCHMARKS.md). `pnpm start` gives a lone process the same.
 */
export const HeapGrowingPercent = 100

export const processNodeArgs = (execArgv: ReadonlyArray<string>): Array<string> => [
  ...execArgv.filter(
    (a) => !a.startsWith("--max-semi-space-size") && !a.startsWith("--heap-growing-percent")
  ),
  `--max-semi-space-size=${YoungGenerationMiB}`,
  `--heap-growing-percent=${HeapGrowingPercent}`
]

/**
 * glibc's fixed malloc thresholds, as `pnpm start` sets them, unless set: blocks of 128 KiB and more are
 * mmap()ed and given back when freed, which keeps down a process's RSS after a minute of charges.
 */
export const processMallocEnv = (env: NodeJS.ProcessEnv): Record<string, string> =>
  Object.fromEntries(
    ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"].flatMap((name) =>
      env[name] === undefined ? [[name, "131072"]] : []
    )
  )

/** A died process is replaced after this long, so a crash at start does not spin. */
const RestartDelayMs = 1_000

/**
 * Runs as the primary of `count` processes, each running this same script with `env` added. Resolves
 * with the exit status once all have stopped: `0` after a signal, `ConfigExitCode` when one could not
 * start for a reason of configuration (it said which): then the others are stopped, none restarted.
 */
export const supervise = (
  count: number,
  env: Record<string, string>,
  format: Logs.Format = "text"
): Promise<number> =>
  new Promise((resolve) => {
    let stopping = false
    let status = 0
    const live = new Set<Worker>()
    const listening = new Set<Worker>()
    ClusterMetrics.relay((asker) => [...listening].filter((w) => w !== asker))
    cluster.setupPrimary({ execArgv: processNodeArgs(process.execArgv) })
    const malloc = processMallocEnv(process.env)
    // Each process has a slot, taken over by its replacement, so the pollers keep taking turns (`Turns`).
    const fork = (follower: boolean, index: number) => {
      const worker = cluster.fork({
        ...malloc,
        ...env,
        [Turns.SlotEnv]: Turns.slotValue({ index, count }),
        ...(follower ? { [FollowerEnv]: "1" } : {})
      })
      live.add(worker)
      worker.once("listening", () => listening.add(worker))
      worker.on("exit", (code, signal) => {
        live.delete(worker)
        listening.delete(worker)
        if (!stopping && code === ConfigExitCode) {
          status = ConfigExitCode
          stop()
        }
        if (stopping) {
          if (live.size === 0) resolve(status)
          return
        }
        console.error(
          Logs.line(
            format,
            `laari process ${worker.process.pid} ended (${signal ?? code}); starting another`,
            "warn"
          )
        )
        setTimeout(() => {
          if (!stopping) fork(true, index)
        }, RestartDelayMs).unref()
      })
      return worker
    }
    const stop = () => {
      if (stopping) return
      stopping = true
      if (live.size === 0) resolve(status)
      for (const worker of live) worker.process.kill("SIGTERM")
    }
    process.on("SIGTERM", stop)
    process.on("SIGINT", stop)
    // The first process migrates and seeds alone; the others start once it is ready, so that none
    // answers `/readyz` before the seeding is done.
    const first = fork(false, 0)
    const onReady = (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type !== ReadyMessage) return
      first.off("message", onReady)
      // Stopping already (a signal during the seeding): start nothing that no one would stop.
      if (stopping) return
      let started = 1
      for (let i = 1; i < count; i++)
        fork(true, i).once("listening", () => {
          if (++started === count)
            console.log(
              Logs.line(format, `laari: all ${count} processes listening on one port (LAARI_PROCESSES)`)
            )
        })
    }
    first.on("message", onReady)
  })

export const isPrimary = () => cluster.isPrimary
