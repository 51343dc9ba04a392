/**
 * The audit log over real HTTP on PGlite: each change a key or the operator makes is one row, with who,
 * from where and the request's id; a refused change leaves none; secrets never reach a summary; a
 * merchant reads only its own rows (scope `audit:read`); and `POST /ops/audit/verify` finds a row edited
 * or deleted behind the service's back.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

let server: TestServer.LocalTestServer
beforeAll(async () => {
  server = await TestServer.start()
}, 120_000)
afterAll(async () => {
  await server?.close()
})

interface Row {
  readonly id: string
  readonly chain: string
  readonly seq: number
  readonly merchantId: string | null
  readonly environment: string | null
  readonly actor: { readonly kind: string; readonly id: string }
  readonly action: string
  readonly resource: { readonly type: string; readonly id: string | null }
  readonly summary: Record<string, unknown>
  readonly address: string | null
  readonly userAgent: string | null
  readonly requestId: string | null
}

const audit = async (key: string, query = "") => {
  const res = await server.request("GET", `/audit-events${query}`, { key })
  expect(res.status, res.text).toBe(200)
  return res.body.data as ReadonlyArray<Row>
}

const keyIds = async (merchantId: string) => {
  const res = await server.ops("GET", `/ops/merchants/${merchantId}/keys`)
  expect(res.status).toBe(200)
  return (res.body as ReadonlyArray<{ id: string }>).map((k) => k.id)
}

const verify = async () => {
  const res = await server.ops("POST", "/ops/audit/verify")
  expect(res.status, res.text).toBe(200)
  return res.body as {
    intact: boolean
    chains: number
    rows: number
    heads: ReadonlyArray<{ chain: string; seq: number; hash: string }>
    broken: ReadonlyArray<{ chain: string; seq: number; rowId: string | null; message: string }>
  }
}

describe("the audit log", () => {
  it("records each change with its actor, address, agent and request id; refusals and reads leave nothing", async () => {
    const m = await F.merchant(server)
    const mandate = await server.request("POST", "/mandates", {
      key: m.test,
      body: F.mandateBody(),
      headers: { "user-agent": "shop-backend/2.1" }
    })
    expect(mandate.status).toBe(201)
    const charge = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
      key: m.test,
      body: { amount: 5000 }
    })
    expect(charge.status).toBe(201)
    const refund = await server.request("POST", "/refunds", {
      key: m.test,
      body: { charge_id: charge.body.id, amount: 1000, reason: "requested_by_customer" }
    })
    expect(refund.status, refund.text).toBe(201)
    // Refused: more than what remains of the charge. Nothing is recorded.
    const refused = await server.request("POST", "/refunds", {
      key: m.test,
      body: { charge_id: charge.body.id, amount: 999_999 }
    })
    expect(refused.status).toBeGreaterThanOrEqual(400)
    await server.request("GET", `/mandates/${mandate.body.id}`, { key: m.test })

    const rows = await audit(m.test)
    // Newest first; the charge is a payment (in the ledger and the events), not a change. The operator's
    // changes to the merchant are the merchant's to read: itself made (no environment), its test keys
    // (the live key is the live environment's).
    expect(rows.map((r) => `${r.actor.kind} ${r.action} ${r.environment}`)).toEqual([
      "api_key refund.create test",
      "api_key mandate.create test",
      "ops_token api_key.create test",
      "ops_token api_key.create test",
      "ops_token merchant.create null"
    ])
    const [refunded, created] = rows
    expect(refunded).toMatchObject({
      merchantId: m.id,
      environment: "test",
      chain: `merchant:${m.id}`,
      resource: { type: "refund", id: refund.body.id },
      summary: { amount: 1000, reason: "requested_by_customer", payment_id: charge.body.id },
      address: expect.stringMatching(/127\.0\.0\.1/),
      requestId: refund.headers.get("request-id")
    })
    expect(created).toMatchObject({ userAgent: "shop-backend/2.1", resource: { id: mandate.body.id } })
    expect(refunded!.actor.kind).toBe("api_key")
    expect(await keyIds(m.id)).toContain(refunded!.actor.id)
    // The merchant's chain holds the operator's changes too (the merchant and its keys made).
    const all = await server.ops("GET", `/ops/audit-events?merchant_id=${m.id}&environment=test&limit=100`)
    const actions = (all.body.data as ReadonlyArray<Row>).map((r) => `${r.actor.kind} ${r.action}`)
    expect(actions).toEqual(
      expect.arrayContaining([
        "ops_token merchant.create",
        "ops_token api_key.create",
        "api_key refund.create"
      ])
    )
    const seqs = (all.body.data as ReadonlyArray<Row>).map((r) => r.seq)
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a))
    expect(Math.min(...seqs)).toBe(1)
  })

  it("never keeps a secret: a webhook endpoint's secret and its rotation are not in the summary", async () => {
    const m = await F.merchant(server)
    const made = await server.request("POST", "/webhook-endpoints", {
      key: m.test,
      body: { url: "https://shop.example/hooks", enabled_events: ["*"] }
    })
    expect(made.status, made.text).toBe(201)
    const rotated = await server.request("POST", `/webhook-endpoints/${made.body.id}/rotate-secret`, {
      key: m.test
    })
    expect(rotated.status, rotated.text).toBe(200)
    const rows = await audit(m.test, "?actor_kind=api_key")
    expect(rows.map((r) => r.action)).toEqual(["webhook_endpoint.rotate_secret", "webhook_endpoint.create"])
    const text = JSON.stringify(rows)
    expect(text).not.toContain(made.body.secret)
    expect(text).not.toContain(rotated.body.secret)
    expect(rows[1]!.summary).toMatchObject({ url: "https://shop.example/hooks" })
  })

  it("a merchant reads its own rows only, filters them, and needs audit:read", async () => {
    const a = await F.merchant(server)
    const b = await F.merchant(server)
    const qr = await server.request("POST", "/qr-codes", {
      key: a.test,
      body: { type: "STATIC", outlet_id: a.outletId }
    })
    expect(qr.status, qr.text).toBe(201)
    const [row] = await audit(a.test)
    expect(row).toMatchObject({ action: "qr_code.create", resource: { id: qr.body.id } })
    expect((await audit(b.test)).map((r) => r.merchantId)).toEqual([b.id, b.id, b.id])
    // Another merchant's row as a cursor lists nothing of it.
    expect(await audit(b.test, `?starting_after=${row!.id}`)).toEqual([])
    expect((await audit(a.test, "?action=qr_code.create")).map((r) => r.id)).toEqual([row!.id])
    expect(await audit(a.test, "?action=refund.create")).toEqual([])
    expect((await audit(a.test, `?resource_id=${qr.body.id}&actor_kind=api_key`)).length).toBe(1)
    expect(await audit(a.test, "?from=2100-01-01T00:00:00%2B05:00")).toEqual([])
    expect((await audit(a.live)).map((r) => r.action)).toEqual(["api_key.create", "merchant.create"])
    const narrow = await a.key("test", ["payments:write"])
    const refused = await server.request("GET", "/audit-events", { key: narrow })
    expect(refused.status).toBe(403)
    expect(refused.text).toContain("audit:read")
  })

  it("verify finds a row edited, a row deleted and the last rows deleted behind the service's back", async () => {
    const m = await F.merchant(server)
    for (let i = 0; i < 3; i++)
      expect(
        (
          await server.request("POST", "/qr-codes", {
            key: m.test,
            body: { type: "STATIC", outlet_id: m.outletId }
          })
        ).status
      ).toBe(201)
    const intact = await verify()
    expect(intact).toMatchObject({ intact: true, broken: [] })
    const chain = `merchant:${m.id}`
    const rows = await server.sql(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{
            id: string
            seq: number
          }>`SELECT id, seq::int AS seq FROM audit_events WHERE chain = ${chain} ORDER BY seq`
      )
    )
    expect(rows.length).toBeGreaterThanOrEqual(5)
    // The head to keep elsewhere: the chain's last row.
    const last = (await server.ops("GET", `/ops/audit-events?merchant_id=${m.id}&environment=test&limit=1`))
      .body.data[0]
    expect(intact.heads).toContainEqual({ chain, seq: rows.at(-1)!.seq, hash: last.hash })
    const tamper = (statement: string) =>
      server.sql(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.withTransaction(
            Effect.zipRight(
              sql.unsafe("ALTER TABLE audit_events DISABLE TRIGGER USER"),
              Effect.zipRight(
                sql.unsafe(statement),
                sql.unsafe("ALTER TABLE audit_events ENABLE TRIGGER USER")
              )
            )
          )
        )
      )
    // The database refuses an edit as it stands.
    await expect(
      server.sql(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`UPDATE audit_events SET action = 'x' WHERE id = ${rows[2]!.id}`
        )
      )
    ).rejects.toThrow()

    await tamper(`UPDATE audit_events SET summary = '{"forged": true}' WHERE id = '${rows[2]!.id}'`)
    const edited = await verify()
    expect(edited.intact).toBe(false)
    expect(edited.broken).toContainEqual({
      chain,
      seq: rows[2]!.seq,
      rowId: rows[2]!.id,
      message: `${chain}: row ${rows[2]!.seq} (${rows[2]!.id}) was changed after it was written`
    })

    await tamper(`DELETE FROM audit_events WHERE id = '${rows[2]!.id}'`)
    const gap = (await verify()).broken.find((b) => b.chain === chain)
    expect(gap).toMatchObject({ seq: rows[3]!.seq, rowId: rows[3]!.id })
    expect(gap!.message).toContain("a row was deleted or inserted")

    // The chain cut back to its first two rows: every link holds, the head does not.
    await tamper(`DELETE FROM audit_events WHERE chain = '${chain}' AND seq > 2`)
    const cut = (await verify()).broken.find((b) => b.chain === chain)
    expect(cut).toMatchObject({ seq: 3, rowId: null })
    expect(cut!.message).toContain("rows were deleted")
  })
})
