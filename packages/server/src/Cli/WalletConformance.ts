/**
 * `laari wallet-conformance --url URL --token TOKEN --payer ID --merchant ID --fee ID`: the wallet
 * connector's conformance suite (@laari/testkit's `WalletConformance`), run by a wallet provider against
 * its own core before laari calls it. One line per rule; exit status 1 when any rule failed.
 */
import { Command, Options } from "@effect/cli"
import { Config, Console, Effect, Option, Redacted } from "effect"

// The suite is loaded only when the command runs: `--help` needs none of it.
const loadSuite = Effect.promise(() => import("@laari/testkit/WalletConformance"))

const wallet = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description))

const refusalWallet = (name: string, what: string) =>
  Options.text(name).pipe(
    Options.withDescription(
      `The id of ${what}, for the rule of its refusal (without it that rule is not checked)`
    ),
    Options.optional
  )

export const walletConformance = Command.make(
  "wallet-conformance",
  {
    url: Options.text("url").pipe(
      Options.withDescription(
        "The core's base address, e.g. http://localhost:4100 (default LAARI_WALLET_URL)"
      ),
      Options.withFallbackConfig(Config.string("LAARI_WALLET_URL"))
    ),
    token: Options.redacted("token").pipe(
      Options.withDescription("The bearer token laari calls the core with (default LAARI_WALLET_TOKEN)"),
      Options.withFallbackConfig(Config.redacted("LAARI_WALLET_TOKEN"))
    ),
    payer: wallet(
      "payer",
      "The id of an active wallet holding at least 10,000 laari: it pays every payment of the run"
    ),
    merchant: wallet("merchant", "The id of an active wallet that receives the payments"),
    fee: wallet("fee", "The id of an active wallet that receives the fees"),
    frozen: refusalWallet("frozen", "a frozen wallet"),
    blocked: refusalWallet("blocked", "a wallet the provider's rules block"),
    limited: refusalWallet("limited", "an active wallet with a limit"),
    empty: refusalWallet(
      "empty",
      "an active wallet holding nothing (also for money-moves-once and reversal-balance, which leave it empty)"
    ),
    environment: Options.choice("environment", ["test", "live"]).pipe(
      Options.withDescription("The environment the transfers name"),
      Options.withDefault("test" as const)
    ),
    timeoutMs: Options.integer("timeout-ms").pipe(
      Options.withDescription("How long to wait for each answer, in milliseconds"),
      Options.withDefault(10_000)
    ),
    json: Options.boolean("json").pipe(Options.withDescription("Print the results as JSON"))
  },
  (o) =>
    Effect.gen(function* () {
      const WalletConformance = yield* loadSuite
      const results = yield* WalletConformance.run({
        url: o.url,
        token: Redacted.value(o.token),
        timeoutMs: o.timeoutMs,
        setup: {
          payer: o.payer,
          merchant: o.merchant,
          fee: o.fee,
          frozen: Option.getOrUndefined(o.frozen),
          blocked: Option.getOrUndefined(o.blocked),
          limited: Option.getOrUndefined(o.limited),
          empty: Option.getOrUndefined(o.empty),
          environment: o.environment
        }
      })
      const failed = results.filter((r) => r.outcome === "failed").length
      const unchecked = results.filter((r) => r.outcome === "not checked").length
      if (o.json) yield* Console.log(JSON.stringify(results, null, 2))
      else
        yield* Console.log(
          [
            ...WalletConformance.lines(results),
            `${results.length - failed - unchecked} passed, ${failed} failed, ${unchecked} not checked (${o.url})`
          ].join("\n")
        )
      if (failed > 0)
        yield* Effect.sync(() => {
          process.exitCode = 1
        })
    })
).pipe(
  Command.withDescription(
    "Check a wallet provider's core against the wallet connector protocol (one line per rule; exit 1 on a failure)"
  )
)
