import { defineProject } from "vitest/config"
import { budgets, sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: {
    ...budgets,
    name: "example-webhook-receiver",
    include: ["test/**/*.test.ts"],
    globalSetup: ["../../scripts/build-dist.ts"]
  }
})
