/**
 * The quick-start test (`pnpm test:quickstart`, its own CI step): the README run in a fresh clone. Not
 * part of `pnpm test`, which it would slow by minutes of clone, install and build.
 */
import { defineConfig } from "vitest/config"
import { sourceConditions } from "../../vitest.shared"

export default defineConfig({
  ...sourceConditions,
  root: import.meta.dirname,
  test: {
    name: "quickstart",
    include: ["test/quickstart/**/*.test.ts"],
    // The first step installs and builds a clone: up to 10 minutes on a loaded 2-core machine.
    testTimeout: 900_000,
    hookTimeout: 600_000
  }
})
