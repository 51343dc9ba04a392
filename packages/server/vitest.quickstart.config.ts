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
    testTimeout: 600_000,
    hookTimeout: 600_000
  }
})
