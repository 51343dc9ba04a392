/**
 * `WriteBehind.rowsJson`, the JSON of a set's rows: the text `JSON.stringify` writes, whatever the rows
 * hold, with its top-level dates formatted once.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as WriteBehind from "../../src/Sql/WriteBehind.js"

/** Instants a batch repeats, years 0 to 10000+ (six-digit years), and an invalid date. */
const date = fc.oneof(
  fc.date({ noInvalidDate: true }),
  fc.constantFrom(
    new Date(0),
    new Date(Date.UTC(2026, 10, 28)),
    new Date(Number.NaN),
    new Date(Date.UTC(10000, 0, 1))
  )
)
const value = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  date,
  fc.dictionary(fc.string(), fc.oneof(fc.string(), date)),
  fc.array(date, { maxLength: 3 })
)
const row = fc.oneof(
  fc.dictionary(fc.string(), value),
  fc.record({ id: fc.string(), at: date, n: fc.integer(), gone: value }, { requiredKeys: ["id"] }),
  value
)

describe("WriteBehind.rowsJson", () => {
  it("writes what JSON.stringify writes, for any rows", () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 8 }), (rows) => {
        expect(WriteBehind.rowsJson(rows)).toBe(JSON.stringify(rows))
      }),
      { numRuns: 2000 }
    )
  })

  it("with columns, writes what JSON.stringify writes of each row's own columns among them, in their order", () => {
    const key = fc.constantFrom("id", "at", "n", "gone", "__proto__")
    fc.assert(
      fc.property(fc.array(row, { maxLength: 8 }), fc.uniqueArray(key, { maxLength: 5 }), (rows, columns) => {
        const picked = rows.map((r) =>
          r === null || typeof r !== "object" || r instanceof Date || Array.isArray(r)
            ? r
            : Object.fromEntries(
                columns.filter((c) => Object.hasOwn(r, c)).map((c) => [c, (r as Record<string, unknown>)[c]])
              )
        )
        expect(WriteBehind.rowsJson(rows, columns)).toBe(JSON.stringify(picked))
      }),
      { numRuns: 2000 }
    )
    expect(WriteBehind.rowsJson([{ id: "a", at: new Date(0), gone: 1 }], ["at", "id"])).toBe(
      '[{"at":"1970-01-01T00:00:00.000Z","id":"a"}]'
    )
  })

  it("formats each instant as JSON would, from a cache it keeps bounded, and leaves the rows as they were", () => {
    const rows = Array.from({ length: 600 }, (_, i) => ({
      id: `r${i}`,
      at: new Date(Date.UTC(2026, 0, 1) + (i % 300) * 1000),
      again: new Date(Date.UTC(2026, 0, 1))
    }))
    const before = rows.map((r) => ({ ...r }))
    const text = WriteBehind.rowsJson(rows)
    expect(text).toBe(JSON.stringify(rows))
    expect(JSON.parse(text)[299]).toEqual({
      id: "r299",
      at: "2026-01-01T00:04:59.000Z",
      again: "2026-01-01T00:00:00.000Z"
    })
    expect(WriteBehind.rowsJson(rows)).toBe(text)
    expect(rows).toEqual(before)
    expect(rows[0]!.at).toBeInstanceOf(Date)
  })
})
