/**
 * When a process polls for background work, so that polls are spread in time instead of all landing in
 * one burst (issue 27 goal 2: a burst of every poller of every process at once was what held charges
 * up). Of `count` processes (`LAARI_PROCESS_SLOT`, set by the supervisor) each polls an idle job every
 * `count` periods, in its turn: the cluster as a whole still polls each job once a period. Within a
 * process the jobs get different offsets inside the period. Turns follow the wall clock, so processes
 * started at different moments still take turns.
 */
import { Effect } from "effect"

export interface Slot {
  /** This process's place, 0 to `count - 1`. */
  readonly index: number
  readonly count: number
}

export const SlotEnv = "LAARI_PROCESS_SLOT"

/** `index/count` for the environment of one of `count` processes. */
export const slotValue = (slot: Slot) => `${slot.index}/${slot.count}`

/** This process's slot: `LAARI_PROCESS_SLOT`, else alone. */
export const slot = (env: NodeJS.ProcessEnv): Slot => {
  const m = /^(\d+)\/(\d+)$/.exec(env[SlotEnv] ?? "")
  const index = Number(m?.[1])
  const count = Number(m?.[2])
  return m !== null && count >= 1 && index < count ? { index, count } : { index: 0, count: 1 }
}

/**
 * Milliseconds from `now` to this process's next turn for work polled cluster-wide every `periodMs`,
 * shifted by `offset` (0 to 1, a share of the period: the job's place among a process's jobs).
 */
export const untilTurn = (slot: Slot, periodMs: number, offset: number, now: number): number => {
  const cycle = periodMs * slot.count
  const phase = periodMs * (slot.index + offset)
  const wait = (((phase - now) % cycle) + cycle) % cycle
  return wait === 0 ? cycle : wait
}

/**
 * Sleeps until this process's next turn (`untilTurn`) by the wall clock, never the service's: a manual
 * clock (`LAARI_CLOCK=manual`) stands still while its sleeps take real time, and turns read from it
 * would repeat one fixed, arbitrary wait (1 ms when it stopped just past a turn) instead of a period.
 */
export const wait = (slot: Slot, periodMs: number, offset: number) =>
  Effect.suspend(() => Effect.sleep(untilTurn(slot, periodMs, offset, Date.now())))
