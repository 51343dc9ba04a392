/**
 * `laari audit verify`: checks every chain of the audit log through the running service's operator API
 * (`POST /ops/audit/verify`) and names the first broken row of each broken chain; exit status 1 then, so
 * a scheduled check can alert. `laari audit list`: the newest rows, filtered as the API filters them.
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import * as Remote from "./Remote.js"

const failedExit = Effect.sync(() => {
  process.exitCode = 1
})

const verify = Command.make("verify", Remote.operator, (o) =>
  Effect.gen(function* () {
    const client = yield* Remote.opsClient(o.url, o.opsToken)
    const verdict = yield* client.opsAudit.verify()
    yield* Remote.print(o.json, verdict, () =>
      verdict.intact
        ? [
            `intact: ${verdict.rows} row${verdict.rows === 1 ? "" : "s"} in ${verdict.chains} chain${verdict.chains === 1 ? "" : "s"}, every hash and link checks out.`
          ]
        : [
            `BROKEN: ${verdict.broken.length} of ${verdict.chains} chains do not check out (${verdict.rows} rows read):`,
            ...verdict.broken.map((b) => `  ${b.message}`)
          ]
    )
    if (!verdict.intact) yield* failedExit
  }).pipe(Remote.report(o.url))
).pipe(
  Command.withDescription(
    "Check every chain of the audit log: each row's hash, its link to the row before, each chain's end; names the first broken row (exit 1)"
  )
)

const text = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

const list = Command.make(
  "list",
  {
    ...Remote.operator,
    merchant: text("merchant", "Only this merchant's rows (its id), in --environment"),
    environment: Options.choice("environment", ["test", "live"]).pipe(
      Options.withDescription("With --merchant: the environment whose rows to list"),
      Options.withDefault("live" as const)
    ),
    action: text("action", "Only rows of this action, such as refund.create"),
    limit: Options.integer("limit").pipe(
      Options.withDescription("How many rows, newest first (1 to 100)"),
      Options.withDefault(25)
    )
  },
  (o) =>
    Effect.gen(function* () {
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      const page = yield* client.opsAudit.listAll({
        urlParams: {
          limit: o.limit,
          ...(o.merchant._tag === "Some"
            ? { merchant_id: o.merchant.value as never, environment: o.environment }
            : {}),
          ...(o.action._tag === "Some" ? { action: o.action.value } : {})
        }
      })
      yield* Remote.print(o.json, page, () =>
        page.data.length === 0
          ? ["No audit events."]
          : page.data.map(
              (e) =>
                `${e.createdAt}  ${e.chain} #${e.seq}  ${e.actor.kind}:${e.actor.id}  ${e.action}  ${e.resource.type}${e.resource.id === null ? "" : ` ${e.resource.id}`}`
            )
      )
    }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("List the newest audit events, every merchant's and the operator's"))

export const audit = Command.make("audit").pipe(
  Command.withDescription("The audit log: verify its chains, list its rows"),
  Command.withSubcommands([verify, list])
)
