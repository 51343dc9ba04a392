import { defineProject } from "vitest/config"
import { budgets, sourceConditions } from "../../vitest.shared"

export default defineProject({
  ...sourceConditions,
  test: { ...budgets, name: "example-qr-render", include: ["test/**/*.test.ts"] }
})
