import { defineConfig } from "vitest/config"
import LongFirstSequencer from "./scripts/LongFirstSequencer"

export default defineConfig({
  test: {
    projects: ["packages/*", "examples/*"],
    reporters: ["default", "./scripts/SummaryReporter.ts"],
    // vitest keeps one core for itself by default: on 2 cores, one test file at a time. Most server files
    // wait on processes, PostgreSQL, Chromium and timers (retries, clocks) rather than compute, so two
    // files at a time overlap those waits; the budgets of vitest.shared.ts hold with both cores busy.
    maxWorkers: 2,
    minWorkers: 1,
    // The long files first (scripts/LongFirstSequencer.ts): a clean clone has no timings, and vitest's
    // order by size would start the four-line Subscriptions.*.test.ts files last.
    sequence: { sequencer: LongFirstSequencer }
  }
})
