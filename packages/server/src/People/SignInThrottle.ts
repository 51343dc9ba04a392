/**
 * Sign-ins slow down before they lock out: after a failure the page waits before answering, longer as the
 * account's tries run out (`RateLimits.signInByAccount`, five), so a guesser's last tries cost seconds
 * each while someone who mistyped once or twice notices nothing. Pure; the page does the sleeping.
 */
import { Duration } from "effect"
import { SignInsPerAccount } from "../Http/RateLimit.js"

/** The waits after each failure, by how many tries are left after it: none for the first two. */
export const Delays: ReadonlyArray<number> = [0, 0, 1_000, 2_000, 4_000]

/**
 * Milliseconds to wait before answering a failed sign-in that left `remaining` of the account's tries:
 * 0 after the first and the second failure, then 1 s, 2 s and 4 s; 4 s once none is left.
 */
export const signInDelayMs = (remaining: number, capacity: number = SignInsPerAccount.capacity): number => {
  const failures = Math.max(0, capacity - Math.max(0, Math.floor(remaining)))
  if (failures === 0) return 0
  return Delays[Math.min(failures, Delays.length) - 1]!
}

/** `signInDelayMs` as a duration, for `Effect.sleep`. */
export const signInDelay = (remaining: number): Duration.Duration => Duration.millis(signInDelayMs(remaining))
