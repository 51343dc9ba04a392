/**
 * `BENCH_SMOKE=1` (`pnpm bench:smoke`, a step of .ci/run): every part of the bench on tiny sizes and
 * durations, through the same code, so a part that breaks fails CI in seconds instead of rotting until
 * someone runs the full bench. Its figures only say that each part works, never how fast.
 */
export const on = process.env.BENCH_SMOKE === "1"

/** `full` normally, `smoke` under BENCH_SMOKE=1. */
export const size = <A>(full: A, smoke: A): A => (on ? smoke : full)
