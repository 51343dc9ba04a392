import { describe, it } from "vitest"
import { startOnPostgres } from "../support/PostgresServer.js"
import { suite } from "../support/QrHttpSuite.js"
import { postgresUrl } from "../support/TestDatabase.js"

if (postgresUrl === undefined) {
  describe.skip("QR codes over HTTP on PostgreSQL: DATABASE_URL is not set", () => {
    it("needs DATABASE_URL", () => {})
  })
} else {
  suite("QR codes over HTTP on PostgreSQL", async () => (await startOnPostgres()).server)
}
