#!/usr/bin/env node
/**
 * `laari`: the command line of the service (`pnpm laari ...` in this repository, `npx laari ...` where
 * `@laari/server` is installed).
 */
import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { operator } from "./Commands.js"
import { listen } from "./Listen.js"
import { trigger } from "./Trigger.js"

const laari = Command.make("laari").pipe(
  Command.withDescription("Run and operate the laari service, and develop against it"),
  Command.withSubcommands([...operator, listen, trigger])
)

const cli = Command.run(laari, { name: "laari", version: "0.1.0" })

NodeRuntime.runMain(cli(process.argv).pipe(Effect.provide(NodeContext.layer)), {
  // With LAARI_LOG_FORMAT=json, `serve` writes its own JSON lines.
  disablePrettyLogger: process.env.LAARI_LOG_FORMAT === "json"
})
