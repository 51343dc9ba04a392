/**
 * What every vitest project shares: the workspace packages resolve to their TypeScript sources through the
 * `@laari/source` export condition, ahead of Vite's defaults (their plain exports are the compiled `dist`
 * that `pnpm start` and a host run). Node tests resolve as Vite's server environment, so both lists carry it.
 */
import { fileURLToPath } from "node:url"
import type { UserWorkspaceConfig } from "vitest/config"

const source = "@laari/source"

export const sourceConditions = {
  resolve: { conditions: [source, "module", "browser", "development|production"] },
  ssr: { resolve: { conditions: [source, "module", "node", "development|production"] } }
} satisfies UserWorkspaceConfig

/**
 * Every project's time budgets, for a 2-core machine that may be busy: each property test is bounded
 * by time as well as by runs (vitest.properties.ts), a test gets 60 s (a few properties, or a request
 * to a server under load) instead of vitest's 5 s, a hook 120 s (a server or a browser starting).
 * Tests that need longer say so themselves.
 */
export const budgets = {
  setupFiles: [fileURLToPath(new URL("./vitest.properties.ts", import.meta.url))],
  testTimeout: 60_000,
  hookTimeout: 120_000
} satisfies UserWorkspaceConfig["test"]
