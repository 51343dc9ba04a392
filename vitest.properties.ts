/**
 * The budget of every fast-check property in every project (a vitest setup file): up to its `numRuns`
 * (fast-check's 100 unless the property names its own), but no new run starts after
 * `PropertyTimeLimitMs`, so a property takes the same bounded time on a quiet machine and on one shared
 * with a CPU hog, where a fixed count of runs would blow the test's timeout. An interrupted property
 * still fails on any counterexample it met, and fails when not even one run completed.
 */
import fc from "fast-check"

/** Per property; the projects' `testTimeout` leaves room for several properties in one test. */
export const PropertyTimeLimitMs = 10_000

fc.configureGlobal({ ...fc.readConfigureGlobal(), interruptAfterTimeLimit: PropertyTimeLimitMs })
