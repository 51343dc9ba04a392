import { defineProject } from "vitest/config"
import { sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: { name: "example-embed", include: ["test/**/*.test.ts"] }
})
