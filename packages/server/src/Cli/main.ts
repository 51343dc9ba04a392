#!/usr/bin/env node
/**
 * `laari`: the command line of the service (`pnpm laari ...` in this repository, `npx laari ...` where
 * `@laari/server` is installed).
 */
import { Command, ValidationError } from "@effect/cli"
// Deep imports: the package's index loads every adapter (cluster, sockets, workers), ~0.6 s of start-up.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect } from "effect"
import * as Colour from "./Colour.js"
import { operator } from "./Commands.js"
import * as Help from "./Help.js"
import { listen } from "./Listen.js"
import { audit } from "./Audit.js"
import { reconcile } from "./Reconcile.js"
import { trigger } from "./Trigger.js"
import { users } from "./Users.js"
import { walletConformance } from "./WalletConformance.js"

const about = { name: "laari", version: "0.1.0" }

const laari = Command.make(about.name).pipe(
  Command.withDescription("Run and operate the laari service, and develop against it"),
  Command.withSubcommands([...operator, users, reconcile, audit, listen, trigger, walletConformance])
)

const cli = Command.run(laari, about)
const args = process.argv.slice(2)

// `laari`, `laari --help`, `laari keys --help`: the overview of those commands, in 100 columns;
// `laari keys create --help`: that command's help, likewise.
const named = args.filter((a) => a !== "--help" && a !== "-h")
const overview = named.length === 0 ? [] : Help.group(laari, named)
const style = { colour: Colour.enabled(process.stdout) }
const help =
  overview === undefined && named.length < args.length
    ? Help.command(laari, about.name, named, style)
    : undefined

const program =
  overview !== undefined
    ? Console.log(Help.overview(laari, about, overview, style))
    : help !== undefined
      ? Console.log(help)
      : cli(process.argv).pipe(
          // @effect/cli has printed what is wrong; the usage follows, and no dump of the error itself.
          Effect.catchIf(ValidationError.isValidationError, () =>
            Console.error(Help.usage(laari, about.name, args)).pipe(
              Effect.zipRight(
                Effect.sync(() => {
                  process.exitCode = 1
                })
              )
            )
          )
        )

NodeRuntime.runMain(
  program.pipe(
    // Reported here rather than by runMain, which would write it outside the console below.
    Effect.tapErrorCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError(cause))),
    Effect.provide(NodeContext.layer),
    (self) => Effect.consoleWith((console) => Effect.withConsole(self, Colour.console(console)))
  ),
  {
    disableErrorReporting: true,
    // With LAARI_LOG_FORMAT=json, `serve` writes its own JSON lines.
    disablePrettyLogger: process.env.LAARI_LOG_FORMAT === "json"
  }
)
