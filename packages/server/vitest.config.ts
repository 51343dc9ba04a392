import { configDefaults, defineProject } from "vitest/config"
import { budgets, sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: {
    ...budgets,
    name: "server",
    include: ["test/**/*.test.ts"],
    // The quick-start test and the failover suite are steps of their own (vitest.quickstart.config.ts,
    // `pnpm test:quickstart`; vitest.failover.config.ts, `pnpm test:failover`).
    exclude: [...configDefaults.exclude, "test/quickstart/**", "test/**/*.ha.test.ts"],
    globalSetup: ["../../scripts/build-dist.ts"],
    // graphql must be one module: Vite would load its ESM build for laari and Node its CommonJS one for
    // these libraries ("Cannot use GraphQLSchema from another module or realm"). Plain node loads one.
    server: { deps: { inline: ["graphql-http", "graphql-query-complexity"] } }
  }
})
