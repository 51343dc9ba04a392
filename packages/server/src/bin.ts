/**
 * `pnpm start`: the standalone service.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Config from "./Config.js"
import * as Keys from "./Keys.js"
import * as Onboarding from "./Onboarding.js"
import * as Server from "./Server.js"

const main = Effect.gen(function* () {
  const config = yield* Config.fromEnv
  const opsToken = config.opsToken ?? Keys.generateOpsToken()
  const server = Server.layer({ ...config, opsToken })
  const seed = Layer.effectDiscard(
    Onboarding.seedDemo({ value: opsToken, generated: config.opsToken === undefined })
  )
  return yield* Layer.launch(seed.pipe(Layer.provideMerge(server)))
})

NodeRuntime.runMain(main)
