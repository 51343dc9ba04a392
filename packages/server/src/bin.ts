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
import * as Onboarding from "./Onboarding.js"
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

const main = Effect.gen(function* () {
  const config = yield* Config.fromEnv
  const opsToken = config.opsToken ?? Keys.generateOpsToken()
  const server = Server.layer({ ...config, opsToken })
  const seed = Layer.effectDiscard(
    Onboarding.seedDemo({ value: opsToken, generated: config.opsToken === undefined })
  )
  return yield* Layer.launch(stopDeadline.pipe(Layer.provideMerge(seed), Layer.provideMerge(server)))
})

NodeRuntime.runMain(main)
