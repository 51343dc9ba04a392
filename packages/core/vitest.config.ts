import { defineProject } from "vitest/config"
import { sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: { name: "core", include: ["test/**/*.test.ts"] }
})
