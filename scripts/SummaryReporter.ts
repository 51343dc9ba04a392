/**
 * Prints one plain closing line, `Tests: N passed, N failed, N skipped`, that CI reads whatever the
 * runner (vitest's own summary is styled for people).
 */
import type { Reporter, TestModule } from "vitest/node"

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
    console.log(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
  }
}
