import { defineProject } from "vitest/config"
import { sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: {
    name: "example-webhook-receiver",
    include: ["test/**/*.test.ts"],
    globalSetup: ["../../scripts/build-dist.ts"]
  }
})
