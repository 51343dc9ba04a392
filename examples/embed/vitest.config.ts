import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "example-embed", include: ["test/**/*.test.ts"] }
})
