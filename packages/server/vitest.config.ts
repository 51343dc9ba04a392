import { configDefaults, defineProject } from "vitest/config"
import { budgets, sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: {
    ...budgets,
    name: "server",
    include: ["test/**/*.test.ts"],
    // The quick-start test is its own step (vitest.quickstart.config.ts, `pnpm test:quickstart`).
    exclude: [...configDefaults.exclude, "test/quickstart/**"],
    globalSetup: ["../../scripts/build-dist.ts"],
    // graphql must be one module: Vite would load its ESM build for laari and Node its CommonJS one for
    // these libraries ("Cannot use GraphQLSchema from another module or realm"). Plain node loads one.
    server: { deps: { inline: ["graphql-http", "graphql-query-complexity"] } }
  }
})
