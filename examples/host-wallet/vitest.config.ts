import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "example-host-wallet", include: ["test/**/*.test.ts"] }
})
