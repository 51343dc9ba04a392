/**
 * The wallet connector's circuit breaker: after `threshold` calls in a row got no answer, new payments are
 * refused at once for `cooldown` (nothing committed, nothing sent); after it, one is let through, and its
 * answer (or the resolver's, which always calls) closes the breaker or opens it again.
 */
import { Effect, Ref } from "effect"

export interface State {
  /** Calls in a row without an answer. */
  readonly failures: number
  /** When the breaker opened (epoch ms), or `null` while closed. */
  readonly openedAt: number | null
}

export const closed: State = { failures: 0, openedAt: null }

export interface Options {
  readonly threshold: number
  readonly cooldownMs: number
}

export const defaults: Options = { threshold: 5, cooldownMs: 5_000 }

/** After a call: an answer closes it; the `threshold`-th failure in a row opens it (again). */
export const record = (state: State, answered: boolean, now: number, options: Options): State => {
  if (answered) return closed
  const failures = state.failures + 1
  return failures >= options.threshold ? { failures, openedAt: now } : { failures, openedAt: state.openedAt }
}

/** Whether a new payment may be sent: closed, or open longer than the cooldown (a trial). */
export const accepting = (state: State, now: number, options: Options): boolean =>
  state.openedAt === null || now - state.openedAt >= options.cooldownMs

export interface Breaker {
  readonly record: (answered: boolean) => Effect.Effect<void>
  readonly accepting: Effect.Effect<boolean>
  /** `true` while new payments are refused. */
  readonly isOpen: () => boolean
}

export const make = (options: Options = defaults): Effect.Effect<Breaker> =>
  Effect.map(Ref.make(closed), (ref) => {
    // Read synchronously by the metrics' collect and `/readyz`.
    let latest = closed
    return {
      record: (answered) =>
        Ref.updateAndGet(ref, (s) => record(s, answered, Date.now(), options)).pipe(
          Effect.tap((s) => Effect.sync(() => (latest = s))),
          Effect.asVoid
        ),
      accepting: Effect.map(Ref.get(ref), (s) => accepting(s, Date.now(), options)),
      isOpen: () => !accepting(latest, Date.now(), options)
    }
  })
