import { defineProject } from "vitest/config"
import { sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: { name: "example-host-wallet", include: ["test/**/*.test.ts"] }
})
