/**
 * What every vitest project shares: the workspace packages resolve to their TypeScript sources through the
 * `@laari/source` export condition, ahead of Vite's defaults (their plain exports are the compiled `dist`
 * that `pnpm start` and a host run). Node tests resolve as Vite's server environment, so both lists carry it.
 */
import type { UserWorkspaceConfig } from "vitest/config"

const source = "@laari/source"

export const sourceConditions = {
  resolve: { conditions: [source, "module", "browser", "development|production"] },
  ssr: { resolve: { conditions: [source, "module", "node", "development|production"] } }
} satisfies UserWorkspaceConfig
