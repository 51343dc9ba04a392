/**
 * Reconciliation of a Maldives day against the wallet provider's core: the whole statement of the day read
 * page by page (bounded: a cursor seen before, or more pages than a day can have, stops the run), laari's
 * side read from its movements, the breaks computed by core's `Reconciliation` and stored as the day's run.
 * A core that does not answer (`Unknown`), or answers a statement that is not one, makes a `failed` run with
 * why: never a clean one, which would say the day agrees when nothing was compared.
 *
 * The operator runs a day now (`run`); the daily job runs the day before once it is over (`daily`). Either
 * claims the day's row first, so one process at a time runs a day.
 */
import { type Balance, type Connector, Errors, Reconciliation } from "@laari/core"
import { Cause, Context, Data, DateTime, Duration, Effect, Either, Layer, Option } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Store from "../Sql/Reconciliation.js"
import * as Client from "./Client.js"
import { WalletConnectorClient, type WalletConnectorClientService } from "./Client.js"
import { clientConfig } from "./Config.js"

/** The database the run's rows are kept in (`Sql/Reconciliation.ts`). */
type Database = Effect.Effect.Context<typeof Store.make>

export interface Limits {
  /** The most pages a statement may have: 100 transfers a page, so 100,000 transfers a day by default. */
  readonly maxPages: number
  /** The longest one run may take, every page and laari's side included. */
  readonly deadline: Duration.Duration
}

export const defaultLimits: Limits = { maxPages: 1_000, deadline: Duration.minutes(10) }

/** How often the daily job looks whether its day is due. */
export const DailyEvery = Duration.minutes(1)

/** Why a run failed, in words for the operator: stored as the run's `error`. */
class RunFailed extends Data.TaggedError("RunFailed")<{ readonly message: string }> {}

const shortened = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max)}...` : text)

/**
 * Every line of the statement of `date`, page after page while `next_cursor` is set. Fails when the core
 * gives no answer, when a page names a cursor already followed (it would never end), or past `maxPages`.
 */
export const readStatement = (
  client: WalletConnectorClientService,
  date: string,
  maxPages: number
): Effect.Effect<ReadonlyArray<Connector.StatementItem>, RunFailed> =>
  Effect.gen(function* () {
    const items: Array<Connector.StatementItem> = []
    const followed = new Set<string>()
    let cursor: string | undefined
    for (let pages = 0; ; ) {
      if (pages >= maxPages)
        return yield* new RunFailed({
          message: `the core's statement of ${date} has more than ${maxPages} pages; stopped there`
        })
      const page = yield* client
        .statement(date, cursor)
        .pipe(Effect.mapError((e) => new RunFailed({ message: e.message })))
      pages += 1
      items.push(...page.transfers)
      const next = page.next_cursor
      if (next === null) return items
      if (followed.has(next))
        return yield* new RunFailed({
          message: `the core's statement of ${date} gave cursor ${JSON.stringify(shortened(next))} again after ${pages} pages; it would never end`
        })
      followed.add(next)
      cursor = next
    }
  })

export interface ReconcilerService {
  /** Whether a wallet provider's core is configured: without one there is nothing to reconcile. */
  readonly enabled: boolean
  /** Runs `date` now and answers the stored run with its breaks. */
  readonly run: (
    date: string
  ) => Effect.Effect<
    Reconciliation.RunWithBreaks,
    | Reconciliation.ConnectorOff
    | Reconciliation.RunInProgress
    | Errors.InvalidRequest
    | Errors.ServiceUnavailable
  >
  /** The stored run of `date`, `undefined` when it was never run. */
  readonly get: (
    date: string
  ) => Effect.Effect<Reconciliation.RunWithBreaks | undefined, Errors.ServiceUnavailable>
  /** The daily job's look: runs the day due (`Reconciliation.dueDate`) if this process claims it; 1 if it ran. */
  readonly daily: Effect.Effect<number, Errors.ServiceUnavailable>
}

export class Reconciler extends Context.Tag("laari/server/Reconciler")<Reconciler, ReconcilerService>() {}

/** The service over the database and, when the connector is on, its client (found in the context, not required). */
export const make = (limits: Limits = defaultLimits): Effect.Effect<ReconcilerService, never, Database> =>
  Effect.gen(function* () {
    const store = yield* Store.make
    const client = yield* Effect.serviceOption(WalletConnectorClient)

    /** The result of `day`, or why there is none. */
    const compare = (core: WalletConnectorClientService, day: Balance.Day) =>
      Effect.gen(function* () {
        const lines = (yield* readStatement(core, day.date, limits.maxPages)).map(Reconciliation.lineOf)
        const faults = Reconciliation.statementFaults(day, lines)
        if (faults.length > 0)
          return yield* new RunFailed({
            message: `the core's statement of ${day.date} is not one of that day: ${faults.slice(0, 3).join("; ")}${
              faults.length > 3 ? `; and ${faults.length - 3} more` : ""
            }`
          })
        const held = yield* store.held(
          day,
          lines.map((l) => l.id)
        )
        return Reconciliation.compute(day, held, lines)
      }).pipe(
        Effect.timeoutFail({
          duration: limits.deadline,
          onTimeout: () =>
            new RunFailed({
              message: `the run of ${day.date} took longer than ${Duration.format(limits.deadline)}; stopped`
            })
        })
      )

    /**
     * Runs the claimed `day` and stores its outcome. Stopped by anything else (the database gone, an
     * interruption), it still leaves the run failed where it can, so the day is not held `running` until
     * the claim goes stale.
     */
    const runClaimed = (core: WalletConnectorClientService, day: Balance.Day, startedAt: DateTime.Utc) =>
      compare(core, day).pipe(
        Effect.map((result): Store.Outcome => ({ _tag: "done", result })),
        Effect.catchTag("RunFailed", (e) =>
          Effect.succeed<Store.Outcome>({ _tag: "failed", error: e.message })
        ),
        Effect.flatMap((outcome) =>
          Effect.flatMap(DateTime.now, (now) => store.finish(day.date, startedAt, outcome, now)).pipe(
            Effect.tap(() => logged(day.date, outcome))
          )
        ),
        Effect.onExit((exit) =>
          exit._tag === "Success"
            ? Effect.void
            : Effect.flatMap(DateTime.now, (now) =>
                store.finish(
                  day.date,
                  startedAt,
                  {
                    _tag: "failed",
                    error: `the run stopped before it finished: ${shortened(Cause.pretty(exit.cause).split("\n")[0] ?? "", 300)}`
                  },
                  now
                )
              ).pipe(Effect.timeout(Duration.seconds(5)), Effect.ignore)
        )
      )

    const logged = (date: string, outcome: Store.Outcome) =>
      outcome._tag === "failed"
        ? Effect.logWarning(`reconciliation of ${date} failed: ${outcome.error}`)
        : outcome.result.breaks.length === 0
          ? Effect.logInfo(`reconciliation of ${date}: clean, ${outcome.result.core.count} transfers`)
          : Effect.logWarning(
              `reconciliation of ${date}: ${outcome.result.breaks.length} breaks (${Object.entries(
                Reconciliation.countByKind(outcome.result.breaks)
              )
                .filter(([, n]) => n > 0)
                .map(([kind, n]) => `${n} ${kind}`)
                .join(", ")})`
            )

    /** The stored run, which a run has just written. */
    const stored = (date: string) =>
      Effect.flatMap(store.get(date), (found) =>
        found === undefined
          ? Effect.dieMessage(`the run of ${date} was stored and is gone`)
          : Effect.succeed(found)
      )

    const run: ReconcilerService["run"] = (date) =>
      Effect.gen(function* () {
        if (Option.isNone(client)) return yield* Reconciliation.ConnectorOff.instance
        const day = yield* Either.match(Reconciliation.day(date), {
          onLeft: (message) => Effect.fail(Errors.InvalidRequest.field("date", message)),
          onRight: Effect.succeed
        })
        const now = yield* DateTime.now
        const today = Reconciliation.dateOf(now)
        if (date > today)
          return yield* Errors.InvalidRequest.field(
            "date",
            `must not be after today, ${today} in Maldives time: the core has posted nothing on it yet`
          )
        if (!(yield* store.claim(date, now, "operator"))) return yield* Reconciliation.RunInProgress.of(date)
        yield* runClaimed(client.value, day, now)
        return yield* stored(date)
      })

    const daily: ReconcilerService["daily"] = Effect.gen(function* () {
      if (Option.isNone(client)) return 0
      const now = yield* DateTime.now
      const date = Reconciliation.dueDate(now)
      if (!(yield* store.claim(date, now, "daily"))) return 0
      yield* runClaimed(client.value, Either.getOrThrow(Reconciliation.day(date)), now)
      return 1
    })

    return { enabled: Option.isSome(client), run, get: store.get, daily }
  })

export const layer = (limits: Limits = defaultLimits): Layer.Layer<Reconciler, never, Database> =>
  Layer.effect(Reconciler, make(limits))

/**
 * The service as the server runs it: with a client of the core configured (`LAARI_WALLET_URL`), else off.
 * Its own client, from the same configuration: the client keeps no state, and the charge path's circuit
 * breaker counts payments' calls, not a statement's.
 */
export const serverLayer: Layer.Layer<Reconciler, never, Database | ServerConfigTag> = Layer.unwrapEffect(
  Effect.map(ServerConfigTag, ({ walletConnector }) =>
    walletConnector === undefined
      ? layer()
      : layer().pipe(Layer.provide(Client.live(clientConfig(walletConnector))))
  )
)
