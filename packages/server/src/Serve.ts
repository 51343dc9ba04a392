/**
 * `laari serve` (and `pnpm start`): the standalone service.
 *
 * On SIGTERM or SIGINT the runtime interrupts the program, which releases its layers in reverse order:
 * the workers stop, the socket stops listening and drains in-flight requests (at most
 * `Edge.defaults.drainTimeoutMs`, then it closes what is left), the database closes, and the process
 * exits 0 (an interruption is a normal end). A second signal kills the process at once.
 */
import { Console, Effect, Layer } from "effect"
import * as Banner from "./Ops/Banner.js"
import * as Config from "./Platform/Config.js"
import * as DataDir from "./Platform/DataDir.js"
import * as Readiness from "./Health/Readiness.js"
import * as Logs from "./Platform/Logs.js"
import * as Notify from "./Notify/Delivery.js"
import * as Onboarding from "./Ops/Onboarding.js"
import * as OpsToken from "./Platform/OpsToken.js"
import * as Processes from "./Processes.js"
import * as Server from "./Server.js"
import * as Startup from "./Startup.js"
import * as Tracing from "./Platform/Tracing.js"

/** Every step of stopping is bounded on its own; should one hang anyway, the process still ends. */
const StopDeadlineMs = 30_000

/** Released first when the program is interrupted: from then on the deadline runs. */
const stopDeadline = Layer.scopedDiscard(
  Effect.addFinalizer(() =>
    Effect.sync(() => {
      setTimeout(() => {
        console.error(`laari did not stop within ${StopDeadlineMs / 1000} s; exiting`)
        process.exit(1)
      }, StopDeadlineMs).unref()
    })
  )
)

/** Set by the primary of several processes: where the token it passes on came from. */
const TokenSourceEnv = "LAARI_OPS_TOKEN_SOURCE"

/** One serving process; the first (or only) one seeds an empty database and prints the start-up lines. */
const serveOne = Effect.gen(function* () {
  const config = yield* Config.fromEnv
  const format = yield* Logs.formatFromEnv
  const inherited = process.env[TokenSourceEnv]
  const token: OpsToken.Resolved =
    inherited === "file" || inherited === "generated"
      ? {
          value: config.opsToken ?? "",
          source: inherited,
          file: OpsToken.pathOf(config.dataDir ?? Config.defaults.dataDir)
        }
      : OpsToken.resolveToken(config.opsToken, config.dataDir ?? Config.defaults.dataDir)
  const accessLog = yield* Logs.accessLogFromEnv
  const server = Server.layer({ ...config, opsToken: token.value })
  // Ready once this is done (`/readyz`): the first process seeds and says where things are; the others,
  // started once it is ready (`Processes`), have nothing more to do.
  const ready = Effect.flatMap(Readiness.Readiness, (r) => r.done)
  const announce = Processes.isFollower(process.env)
    ? Layer.effectDiscard(ready)
    : Layer.effectDiscard(
        Effect.gen(function* () {
          const seeded = yield* Onboarding.seedDemo
          const { channel } = yield* Notify.Notify
          const text = Banner.lines({
            config,
            token,
            seeded,
            showSecrets: format === "text",
            processes: Processes.plan(process.env).processes,
            notices: channel
          }).join("\n")
          yield* format === "text" ? Console.log(text) : Console.error(text)
          yield* ready
          if (Processes.isWorker()) Processes.announceReady()
        })
      )
  return yield* Layer.launch(
    stopDeadline.pipe(Layer.provideMerge(announce), Layer.provideMerge(server))
  ).pipe(
    Effect.provide(Logs.layer(format)),
    Effect.provideService(Logs.AccessLog, accessLog),
    Effect.provide(Tracing.layer),
    // The service runs until interrupted: a failure is one of starting, and one of configuration is
    // said in a line, not a stack, with the status the supervisor does not restart.
    Effect.catchAllCause((cause) => {
      const line = Startup.explain(cause, config)
      return line === undefined ? Effect.failCause(cause) : configurationError(line)
    })
  )
})

const configurationError = (line: string) =>
  Console.error(`laari: ${line}`).pipe(
    Effect.zipRight(Effect.sync(() => process.exit(Startup.ConfigExitCode)))
  )

/**
 * The service: one process, or with `LAARI_PROCESSES=N` a supervisor of N sharing one port and token. On
 * PGlite it holds the data directory from the start (`DataDir.lock`): a second service on the same one
 * is refused at once, in one line naming the process that has it.
 */
export const run = Effect.gen(function* () {
  yield* Config.fromEnv.pipe(
    Effect.tap((config) => DataDir.prepare(config.dataDir ?? Config.defaults.dataDir)),
    Effect.tap((config) =>
      config.databaseUrl === undefined
        ? DataDir.lock(config.dataDir ?? Config.defaults.dataDir, `the laari service on port ${config.port}`)
        : Effect.void
    ),
    Effect.catchTag("DataDirExposed", (e) =>
      Console.error(`laari: ${e.message}`).pipe(Effect.zipRight(Effect.sync(() => process.exit(1))))
    ),
    Effect.catchTag("DataDirInUse", (e) => configurationError(e.message))
  )
  const plan = yield* Effect.try(() => Processes.plan(process.env)).pipe(
    Effect.catchAll((e) =>
      Console.error(`laari: ${(e.error as Error).message}`).pipe(
        Effect.zipRight(Effect.sync(() => process.exit(1)))
      )
    )
  )
  if (Processes.isPrimary()) {
    const { port } = yield* Config.fromEnv
    if (yield* Effect.promise(() => Startup.portTaken(port)))
      return yield* configurationError(Startup.portInUse(port))
  }
  if (Processes.isPrimary() && plan.processes > 1) {
    const config = yield* Config.fromEnv
    const token = OpsToken.resolveToken(config.opsToken, config.dataDir ?? Config.defaults.dataDir)
    const env: Record<string, string> =
      token.source === "env" ? {} : { LAARI_OPS_TOKEN: token.value, [TokenSourceEnv]: token.source }
    // Nothing said before the first process has opened the database: an error of configuration it meets
    // is the first line and the only one (`Processes.supervise` says how many listen, once they do).
    const format = yield* Logs.formatFromEnv
    // Uninterruptible: on SIGTERM the supervisor stops its processes and waits for them itself; the
    // runtime's own handling would otherwise end this process at once and cut their connections.
    const code = yield* Effect.uninterruptible(
      Effect.promise(() => Processes.supervise(plan.processes, env, format))
    )
    if (code !== 0) process.exit(code)
    return
  }
  if (Processes.isPrimary() && plan.reason !== undefined && process.env.LAARI_PROCESSES)
    yield* Console.log(Logs.line(yield* Logs.formatFromEnv, `laari: one process (${plan.reason})`))
  return yield* serveOne
}).pipe(Effect.scoped)
