/**
 * A keyed charge reaches the database in two batches, on PostgreSQL (round trips) as on PGlite
 * (calls): BEGIN, the key's claim and the mandate's lock in one; the writes and COMMIT in the other. The
 * tests record each batch's statements (`firstWords` of each) by patching their driver; this runs the
 * charge and its replay and checks the batches.
 */
import { expect } from "vitest"
import * as F from "./Fixtures.js"
import type { TestServer } from "./TestServer.js"

/** A statement as the checks name it: its first three words. */
export const firstWords = (text: string): string =>
  text.replace(/\s+/g, " ").trim().split(" ").slice(0, 3).join(" ")

/** Charges a mandate with an Idempotency-Key and again with the same key; `batches` fills meanwhile. */
export const check = async (
  server: TestServer,
  batches: Array<ReadonlyArray<string>>,
  key: string
): Promise<void> => {
  const m = await F.merchant(server)
  const id = (await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })).body.id
  batches.length = 0
  const charge = () =>
    server.request("POST", `/mandates/${id}/charges`, {
      key: m.test,
      body: { amount: 1000 },
      headers: { "idempotency-key": key }
    })
  const charged = await charge()
  expect(charged.status).toBe(201)
  const claim = batches.findIndex((b) => b.includes("INSERT INTO idempotency_keys"))
  expect(batches[claim]).toEqual(["BEGIN", "INSERT INTO idempotency_keys", "WITH m AS"])
  expect(batches[claim + 1]?.at(-1)).toBe("COMMIT")
  expect(batches.slice(claim + 1).some((b) => b.includes("WITH m AS"))).toBe(false)
  // A retry replays, whatever it locked on the way.
  const replay = await charge()
  expect(replay.status).toBe(201)
  expect(replay.headers.get("idempotent-replay")).toBe("true")
  expect(replay.body).toEqual(charged.body)
  expect((await server.request("GET", "/test-helpers/payer", { key: m.test })).body.balance).toBe(
    10_000_000 - 1000
  )
}
