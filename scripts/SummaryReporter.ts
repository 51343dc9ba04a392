/**
 * Prints one plain closing line, `Tests: N passed, N failed, N skipped`, that CI reads whatever the
 * runner (vitest's own summary is styled for people), and before it the slowest files with their
 * durations (tests and hooks), so a CI log says where the suite's time went.
 */
import { relative } from "node:path"
import type { Reporter, TestModule } from "vitest/node"

/** How many of the slowest files the summary names. */
const Slowest = 20

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
    }
    const durations = modules
      .map((module) => ({
        path: relative(process.cwd(), module.moduleId),
        seconds: module.diagnostic().duration / 1000
      }))
      .sort((a, b) => b.seconds - a.seconds)
    const total = durations.reduce((sum, d) => sum + d.seconds, 0)
    console.log(`\nSlowest files (of ${modules.length}; ${Math.round(total)} s in all files):`)
    for (const d of durations.slice(0, Slowest))
      console.log(`${d.seconds.toFixed(1).padStart(8)} s  ${d.path}`)
    console.log(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
  }
}
