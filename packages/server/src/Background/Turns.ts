/**
 * When a process polls for background work, so that polls are spread in time instead of all landing in
 * one burst (a burst of every poller of every process at once was what held charges
 * up). Of `count` processes (`LAARI_PROCESS_SLOT`, set by the supervisor) each polls an idle job every
 * `count` periods, in its turn: the cluster as a whole still polls each job once a period. Within a
 * process the jobs get different offsets inside the period. Turns follow the wall clock, so processes
 * started at different moments still take turns. Each host's supervisor numbers its own processes: a
 * host's turns are shifted by a share of the period drawn from its name, so the slot 0s of several hosts
 * do not poll in the same instant.
 */
import { hostname } from "node:os"
import { Effect } from "effect"

export interface Slot {
  /** This process's place, 0 to `count - 1`. */
  readonly index: number
  readonly count: number
  /** This host's shift, a share (0 to 1) of the period. */
  readonly shift?: number
}

/** A share of the period, 0 to 1, fixed for `name` (FNV-1a). */
export const shiftOf = (name: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0
  return (h % 1_000) / 1_000
}

export const SlotEnv = "LAARI_PROCESS_SLOT"

/** `index/count` for the environment of one of `count` processes. */
export const slotValue = (slot: Slot) => `${slot.index}/${slot.count}`

/** This process's slot: `LAARI_PROCESS_SLOT`, else alone; shifted by this host's name. */
export const slot = (env: NodeJS.ProcessEnv, host = hostname()): Slot => {
  const m = /^(\d+)\/(\d+)$/.exec(env[SlotEnv] ?? "")
  const index = Number(m?.[1])
  const count = Number(m?.[2])
  const shift = shiftOf(host)
  return m !== null && count >= 1 && index < count ? { index, count, shift } : { index: 0, count: 1, shift }
}

/**
 * Milliseconds from `now` to this process's next turn for work polled cluster-wide every `periodMs`,
 * shifted by `offset` (0 to 1, a share of the period: the job's place among a process's jobs).
 */
export const untilTurn = (slot: Slot, periodMs: number, offset: number, now: number): number => {
  const cycle = periodMs * slot.count
  const phase = periodMs * (slot.index + ((offset + (slot.shift ?? 0)) % 1))
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
