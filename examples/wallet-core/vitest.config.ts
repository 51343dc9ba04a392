import { defineProject } from "vitest/config"
import { budgets, sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: { ...budgets, name: "example-wallet-core", include: ["test/**/*.test.ts"] }
})
