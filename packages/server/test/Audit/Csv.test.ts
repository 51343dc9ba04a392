/**
 * The audit log's CSV: the header, every field of a row in its column with ids in full, RFC 4180
 * quoting, and no cell a spreadsheet would run as a formula.
 */
import type { AuditEvent } from "@laari/core"
import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import * as Csv from "../../src/Audit/Csv.js"

const row = (over: Partial<AuditEvent.Event> = {}): AuditEvent.Event => ({
  id: "0d6f1b52-8a3e-4c1e-9a7b-2f4e5d6c7b8a",
  chain: "merchant:5b7f9e0a-1c2d-4e3f-8a9b-0c1d2e3f4a5b",
  seq: 7,
  prevHash: "0".repeat(64),
  hash: "a".repeat(64),
  merchantId: "5b7f9e0a-1c2d-4e3f-8a9b-0c1d2e3f4a5b",
  environment: "test",
  actor: { kind: "api_key", id: "9c8b7a6f-5e4d-4c3b-8a29-181716151413" },
  action: "refund.create",
  resourceType: "refund",
  resourceId: "e1d2c3b4-a596-4877-8695-a4b3c2d1e0f9",
  summary: { amount: 700, reason: null },
  address: "127.0.0.1",
  userAgent: "curl/8.5",
  requestId: "req_0123456789abcdef0123456789abcdef",
  at: DateTime.unsafeMake("2026-12-07T10:15:30.250Z"),
  ...over
})

describe("Csv", () => {
  it("has a header, then one line per row with every field, each line ending in CRLF", () => {
    const text = Csv.csv([row(), row({ seq: 8, resourceId: null, environment: null, address: null })])
    const lines = text.split("\r\n")
    expect(lines).toHaveLength(4)
    expect(lines[3]).toBe("")
    expect(lines[0]).toBe(
      "id,created_at,actor_kind,actor_id,action,resource_type,resource_id,environment,summary,address,user_agent,request_id,chain,seq,hash"
    )
    expect(lines[1]).toBe(
      [
        "0d6f1b52-8a3e-4c1e-9a7b-2f4e5d6c7b8a",
        "2026-12-07T15:15:30+05:00",
        "api_key",
        "9c8b7a6f-5e4d-4c3b-8a29-181716151413",
        "refund.create",
        "refund",
        "e1d2c3b4-a596-4877-8695-a4b3c2d1e0f9",
        "test",
        '"{""amount"":700,""reason"":null}"',
        "127.0.0.1",
        "curl/8.5",
        "req_0123456789abcdef0123456789abcdef",
        "merchant:5b7f9e0a-1c2d-4e3f-8a9b-0c1d2e3f4a5b",
        "7",
        "a".repeat(64)
      ].join(",")
    )
    // What a row lacks is an empty cell.
    expect(lines[2]!.split(",").slice(5, 10)).toEqual([
      "refund",
      "",
      "",
      '"{""amount"":700',
      '""reason"":null}"'
    ])
    expect(lines[2]!.split(",")[10]).toBe("")
  })

  it("quotes separators, quotes and line breaks", () => {
    expect(Csv.cell('say "hi", then\r\nleave')).toBe('"say ""hi"", then\r\nleave"')
    expect(Csv.cell("plain")).toBe("plain")
    expect(Csv.cell(null)).toBe("")
    expect(Csv.cell(12)).toBe("12")
  })

  it("defuses text a spreadsheet would run as a formula, and only that", () => {
    for (const start of ["=", "+", "-", "@", "\t", "\r"])
      expect(Csv.cell(`${start}SUM(A1)`).replace(/^"/, "")).toBe(
        `'${start}SUM(A1)${start === "\r" ? '"' : ""}`
      )
    expect(Csv.cell("=1+1")).toBe("'=1+1")
    expect(Csv.cell("-5")).toBe("'-5")
    // Numbers are the service's own: a negative one stays a number.
    expect(Csv.cell(-5)).toBe("-5")
    expect(Csv.cell("a=b")).toBe("a=b")
    const line = Csv.line(row({ summary: {}, userAgent: "=cmd|' /C calc'!A0" }))
    expect(line.split(",")[10]).toBe("'=cmd|' /C calc'!A0")
  })
})
