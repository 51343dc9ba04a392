import { defineProject } from "vitest/config"
import { budgets, sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: { ...budgets, name: "example-host-wallet", include: ["test/**/*.test.ts"] }
})
