import { defineProject } from "vitest/config"
import { sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: { name: "example-subscription-clock", include: ["test/**/*.test.ts"] }
})
