import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "example-qr-render", include: ["test/**/*.test.ts"] }
})
