/**
 * The server's Prometheus metrics, in a registry of its own (several servers in one process, as in the
 * tests, each have theirs): the request histogram the HTTP middleware feeds, and collectors that read
 * the rest at scrape time: core's and the deliveries' Effect counters, the work each background job has
 * due (one count each, bounded by a statement timeout), the database pool, and the process's defaults.
 *
 * prom-client is here for its exposition format, its histograms and the process and Node.js metrics it
 * collects (CPU, memory, event-loop lag, GC), which Prometheus dashboards expect under their usual
 * unprefixed names (`process_cpu_seconds_total`, `nodejs_heap_size_used_bytes`); laari's own metrics are
 * prefixed `laari_`. Three of those defaults are gauges named `_total` (`nodejs_active_handles_total`,
 * `nodejs_active_requests_total`, `nodejs_active_resources_total`), which Prometheus reserves for
 * counters (promtool flags them); they are left out: each is the sum over the `type` label of the gauge
 * of the same name without `_total`, which stays.
 *
 * With several processes (`LAARI_PROCESSES`) a scrape shows them all (`ClusterMetrics`): counters and
 * histograms summed, the process metrics as prom-client aggregates them (memory summed, event-loop lag
 * averaged, the start time left out); the due work, which is the database's, counted once.
 */
import { Billing, Counters, Deliveries, Mandates, Reconciliation, Resolver } from "@laari/core"
import { Context, DateTime, Duration, Effect, Layer, Option, Runtime } from "effect"
import * as Prometheus from "prom-client"
import { Clockwork } from "../Background/Clockwork.js"
import * as ClusterMetrics from "./ClusterMetrics.js"
import { PoolStats } from "../Platform/PoolStats.js"
import * as ReconciliationSql from "../Sql/Reconciliation.js"
import * as ScrapeCounts from "../Sql/ScrapeCounts.js"
import * as Delivery from "../Webhooks/Delivery.js"
import * as Notify from "../Notify/Delivery.js"
import * as WalletLedger from "../WalletConnector/Ledger.js"

/** The labels of one answered request: `route` is a template (`/mandates/{id}`) or `unmatched`. */
export interface RequestLabels {
  readonly method: string
  readonly route: string
  readonly status: number
}

export interface MetricsService {
  readonly registry: Prometheus.Registry
  /** Records a request answered after `seconds`. */
  readonly observeRequest: (labels: RequestLabels, seconds: number) => void
  /** The exposition text. */
  readonly scrape: Effect.Effect<string>
}

export class Metrics extends Context.Tag("laari/server/Metrics")<Metrics, MetricsService>() {}

/** Longest the background jobs' counts may take; a scrape must stay quick when the database is not. */
export const DueCountTimeout = Duration.seconds(2)

/** The counters kept with Effect's `Metric`, exposed as Prometheus counters. */
const counters: ReadonlyArray<Counters.Counter<string>> = [
  Mandates.Charges,
  Billing.Renewals,
  Deliveries.Attempts,
  Notify.Notices,
  Resolver.Looks
]

const exposeCounter = (registry: Prometheus.Registry, c: Counters.Counter<string>) =>
  new Prometheus.Counter({
    name: c.name,
    help: c.description,
    labelNames: [c.label],
    registers: [registry],
    collect() {
      this.reset()
      for (const [value, n] of Effect.runSync(Counters.read(c))) this.inc({ [c.label]: value }, n)
    }
  })

export const layer = Layer.scoped(
  Metrics,
  Effect.gen(function* () {
    const counts = yield* ScrapeCounts.make(DueCountTimeout)
    const reconciliations = yield* ReconciliationSql.make
    const pool = yield* PoolStats
    const clockwork = yield* Clockwork
    const runtime = yield* Effect.runtime<never>()
    const registry = yield* Effect.acquireRelease(
      Effect.sync(() => new Prometheus.Registry()),
      (r) => Effect.sync(() => r.clear())
    )

    Prometheus.collectDefaultMetrics({ register: registry })
    for (const name of MisnamedDefaults) registry.removeSingleMetric(name)

    // What the database holds, the same whichever process counts it: counted by the scraped one only.
    const shared = new Prometheus.Registry()

    const scrapeErrors = new Prometheus.Counter({
      name: "laari_metrics_scrape_errors_total",
      help: "Processes whose metrics a scrape could not include: they did not answer in time",
      registers: [registry]
    })

    const requests = new Prometheus.Histogram({
      name: "laari_http_request_duration_seconds",
      help: "Time to answer an HTTP request, until its response head, by method, route template and status",
      labelNames: ["method", "route", "status"],
      registers: [registry]
    })

    for (const c of counters) exposeCounter(registry, c)

    // The server's clock: a manual clock's now decides what is due, as it does for the jobs.
    const now = () =>
      clockwork.manual === undefined ? DateTime.unsafeNow() : DateTime.unsafeMake(clockwork.manual.now())

    new Prometheus.Gauge({
      name: "laari_background_jobs_due",
      help: "Items each background job has due now (absent when they could not be counted in time)",
      labelNames: ["job"],
      registers: [shared],
      async collect() {
        this.reset()
        const counted = await Runtime.runPromise(runtime)(
          counts.due(now(), Delivery.JobName).pipe(
            Effect.tapErrorCause((cause) => Effect.logWarning("counting due background work failed", cause)),
            Effect.option
          )
        )
        if (counted._tag === "Some") for (const [job, n] of counted.value) this.set({ job }, n)
      }
    })

    // The latest finished reconciliation's breaks, the database's like the due work: counted once.
    new Prometheus.Gauge({
      name: "laari_reconciliation_breaks",
      help: "Breaks of the latest finished reconciliation against the wallet provider's core, by kind (0 before any run)",
      labelNames: ["kind"],
      registers: [shared],
      async collect() {
        this.reset()
        const counted = await Runtime.runPromise(runtime)(
          counts.bounded(reconciliations.latestBreaks).pipe(
            Effect.tapErrorCause((cause) =>
              Effect.logWarning("counting reconciliation breaks failed", cause)
            ),
            Effect.option
          )
        )
        if (counted._tag === "None") return
        const found = new Map(counted.value)
        for (const kind of Reconciliation.Kinds) this.set({ kind }, found.get(kind) ?? 0)
      }
    })

    new Prometheus.Gauge({
      name: "laari_db_pool_connections",
      help: "Database connections: total open, idle, and requests waiting for one (PGlite: total only, 1)",
      labelNames: ["state"],
      registers: [registry],
      collect() {
        this.reset()
        const counts = pool.counts()
        this.set({ state: "total" }, counts.total)
        if (counts.idle !== undefined) this.set({ state: "idle" }, counts.idle)
        if (counts.waiting !== undefined) this.set({ state: "waiting" }, counts.waiting)
      }
    })

    const connector = yield* Effect.serviceOption(WalletLedger.ConnectorState)
    if (Option.isSome(connector))
      new Prometheus.Gauge({
        name: "laari_wallet_connector_circuit_open",
        help: "1 while this process refuses new payments at once because the wallet provider's core failed repeatedly, else 0",
        registers: [registry],
        collect() {
          this.set(connector.value.breaker.isOpen() ? 1 : 0)
        }
      })

    const own = Prometheus.Registry.merge([registry, shared])
    const scrape = ClusterMetrics.inCluster()
      ? Effect.gen(function* () {
          const siblings = yield* Effect.promise(ClusterMetrics.siblings)
          if (siblings.missed > 0) scrapeErrors.inc(siblings.missed)
          const mine = yield* Effect.promise(() => registry.getMetricsAsJSON())
          const all = Prometheus.AggregatorRegistry.aggregate<Prometheus.PrometheusContentType>([
            mine,
            ...siblings.registries
          ])
          return yield* Effect.promise(() => Prometheus.Registry.merge([all, shared]).metrics())
        })
      : Effect.promise(() => own.metrics())
    if (ClusterMetrics.inCluster()) {
      const stop = ClusterMetrics.answer(registry)
      yield* Effect.addFinalizer(() => Effect.sync(stop))
    }

    return {
      registry,
      observeRequest: ({ method, route, status }, seconds) =>
        requests.observe({ method, route, status: String(status) }, seconds),
      scrape
    }
  })
)

/** prom-client's default gauges named like counters (see above). */
const MisnamedDefaults = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total"
]
