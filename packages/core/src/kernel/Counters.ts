/**
 * What the engine counts, as Effect `Metric`s: core does no I/O and knows no metrics library, so it only
 * increments; a host reads the values (`read`) and exposes them however it likes (the server: Prometheus
 * at `/metrics`). Every counter has one label with a fixed set of values, so its series stay few.
 *
 * The helper is here, in `kernel/`, and each counter with the feature it counts (`Mandates.Charges`,
 * `Billing.Renewals`, `Deliveries.Attempts`, `Notices.Counted`): the label's values are that feature's.
 *
 * Effect keeps metric values in one registry per process: several engines in one process add up.
 */
import { Effect, Metric } from "effect"

/** A counter with one label, its name (written here only) and every value the label can take. */
export interface Counter<Value extends string> {
  readonly name: string
  readonly description: string
  readonly label: string
  readonly values: ReadonlyArray<Value>
  readonly metric: Metric.Metric.Counter<number>
}

export const counter = <const Value extends string>(options: {
  readonly name: string
  readonly description: string
  readonly label: string
  readonly values: ReadonlyArray<Value>
}): Counter<Value> => ({
  ...options,
  metric: Metric.counter(options.name, { description: options.description, incremental: true })
})

/** Adds `n` (default 1) to the series of `value`. */
export const count = <Value extends string>(c: Counter<Value>, value: Value, n = 1): Effect.Effect<void> =>
  n === 0 ? Effect.void : Metric.incrementBy(Metric.tagged(c.metric, c.label, value), n)

/** Every series of `c`, those never incremented included (as 0), in the order of `values`. */
export const read = <Value extends string>(
  c: Counter<Value>
): Effect.Effect<ReadonlyArray<readonly [Value, number]>> =>
  Effect.forEach(c.values, (value) =>
    Effect.map(
      Metric.value(Metric.tagged(c.metric, c.label, value)),
      (state) => [value, state.count] as const
    )
  )
