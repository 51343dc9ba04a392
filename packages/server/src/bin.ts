/**
 * `pnpm start`: the standalone service.
 *
 * On SIGTERM or SIGINT `NodeRuntime.runMain` interrupts the program, which releases its layers in
 * reverse order: the workers stop, the socket stops listening and drains in-flight requests (at most
 * `Edge.defaults.drainTimeoutMs`, then it closes what is left), the database closes, and the process
 * exits 0 (an interruption is a normal end). A second signal kills the process at once.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Config from "./Config.js"
import * as Keys from "./Keys.js"
import * as Logs from "./Logs.js"
import * as Onboarding from "./Onboarding.js"
import * as Processes from "./Processes.js"
import * as Server from "./Server.js"

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

/** Set by the primary of several processes when it generated the operator token they share. */
const GeneratedTokenEnv = "LAARI_OPS_TOKEN_GENERATED"

const main = Effect.gen(function* () {
  const config = yield* Config.fromEnv
  const opsToken = config.opsToken ?? Keys.generateOpsToken()
  const server = Server.layer({ ...config, opsToken })
  const seed = Processes.isFollower(process.env)
    ? Layer.empty
    : Layer.effectDiscard(
        Onboarding.seedDemo({
          value: opsToken,
          generated: config.opsToken === undefined || process.env[GeneratedTokenEnv] === "1"
        })
      )
  return yield* Layer.launch(stopDeadline.pipe(Layer.provideMerge(seed), Layer.provideMerge(server))).pipe(
    Effect.provide(Logs.layer(yield* Logs.formatFromEnv))
  )
})

const plan = (() => {
  try {
    return Processes.plan(process.env)
  } catch (e) {
    console.error(`laari: ${(e as Error).message}`)
    process.exit(1)
  }
})()
if (Processes.isPrimary() && plan.processes > 1) {
  // Every process shares one operator token: generate it here when none is set.
  const token = process.env.LAARI_OPS_TOKEN
  const env: Record<string, string> =
    token === undefined || token === ""
      ? { LAARI_OPS_TOKEN: Keys.generateOpsToken(), [GeneratedTokenEnv]: "1" }
      : {}
  console.log(`laari: ${plan.processes} processes on one port (LAARI_PROCESSES)`)
  await Processes.supervise(plan.processes, env)
  process.exit(0)
} else {
  if (Processes.isPrimary() && plan.reason !== undefined && process.env.LAARI_PROCESSES)
    console.log(`laari: one process (${plan.reason})`)
  // The pretty logger runMain adds would write every line a second time, as text.
  NodeRuntime.runMain(main, { disablePrettyLogger: process.env.LAARI_LOG_FORMAT === "json" })
}
