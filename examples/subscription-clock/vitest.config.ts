import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "example-subscription-clock", include: ["test/**/*.test.ts"] }
})
