import { describe, it } from "vitest"
import { startOnPostgres } from "../support/PostgresServer.js"
import { suite } from "../support/SubscriptionHttpSuite.js"
import { postgresUrl } from "../support/TestDatabase.js"

if (postgresUrl === undefined) {
  describe.skip("subscriptions and checkout over HTTP on PostgreSQL: DATABASE_URL is not set", () => {
    it("needs DATABASE_URL", () => {})
  })
} else {
  suite("subscriptions and checkout over HTTP on PostgreSQL", async () => (await startOnPostgres()).server)
}
