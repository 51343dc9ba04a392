import { describe, expect, it } from "@effect/vitest"
import { Balance, Ids } from "@laari/core"
import { DateTime, Either } from "effect"
import fc from "fast-check"

const id = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
const at = (iso: string) => DateTime.unsafeMake(iso)

describe("classify", () => {
  it("names each payment path's transfers by their source", () => {
    expect(Balance.classify("payment", `mandate-charge:${id}`)).toEqual({ type: "charge", sourceId: id })
    expect(Balance.classify("payment", `qr-payment:${id}`)).toEqual({ type: "qr_payment", sourceId: id })
    expect(Balance.classify("payment", `checkout:${id}`)).toEqual({ type: "checkout_payment", sourceId: id })
    expect(Balance.classify("payment", `${id}:3`)).toEqual({ type: "invoice", sourceId: id })
  })

  it("a refund is one by its kind; its source is the id without `refund:`", () => {
    expect(Balance.classify("refund", `refund:${id}`)).toEqual({ type: "refund", sourceId: id })
    expect(Balance.classify("refund", "re_123")).toEqual({ type: "refund", sourceId: "re_123" })
    // A payment's id never makes it a refund, nor a refund's kind a payment.
    expect(Balance.classify("payment", `refund:${id}`)).toEqual({
      type: "adjustment",
      sourceId: `refund:${id}`
    })
    expect(Balance.classify("refund", `mandate-charge:${id}`)).toEqual({
      type: "refund",
      sourceId: `mandate-charge:${id}`
    })
  })

  it("anything else is an adjustment, its source the transfer id", () => {
    for (const [kind, transferId] of [
      ["payment", "mandate-charge:not-a-uuid"],
      ["payment", `${id}:x`],
      ["payment", `${id}`],
      ["funding", `qr-payment:${id}`],
      ["correction", `${id}:1`]
    ] as const)
      expect(Balance.classify(kind, transferId)).toEqual({ type: "adjustment", sourceId: transferId })
  })
})

describe("transaction", () => {
  it("gross is net plus fee; a refund's gross is its negative net", () => {
    const createdAt = at("2026-03-31T10:00:00Z")
    expect(
      Balance.transaction({
        transferId: `qr-payment:${id}`,
        kind: "payment",
        net: 9_900,
        fee: 100,
        createdAt
      })
    ).toEqual({
      id: `qr-payment:${id}`,
      type: "qr_payment",
      sourceId: id,
      gross: 10_000,
      fee: 100,
      net: 9_900,
      createdAt
    })
    expect(
      Balance.transaction({ transferId: `refund:${id}`, kind: "refund", net: -2_500, fee: 0, createdAt })
    ).toMatchObject({ type: "refund", gross: -2_500, fee: 0, net: -2_500 })
  })
})

describe("day", () => {
  it("a Maldives day runs from 19:00 UTC the day before to 19:00 UTC", () => {
    const d = Either.getOrThrow(Balance.day("2026-03-01"))
    expect(DateTime.formatIso(d.from)).toBe("2026-02-28T19:00:00.000Z")
    expect(DateTime.formatIso(d.to)).toBe("2026-03-01T19:00:00.000Z")
    const leap = Either.getOrThrow(Balance.day("2028-02-29"))
    expect(DateTime.formatIso(leap.to)).toBe("2028-02-29T19:00:00.000Z")
  })

  it("refuses what is not a calendar day", () => {
    for (const bad of [
      "2026-02-30",
      "2026-13-01",
      "2026-3-1",
      "20260301",
      "2026-03-01T00:00",
      "",
      " 2026-03-01",
      "2026-00-10"
    ])
      expect(Either.isLeft(Balance.day(bad)), bad).toBe(true)
    expect(Balance.day("2026-3-1")).toEqual(Either.left("date must be a day of the form YYYY-MM-DD"))
    expect(Balance.day("2026-02-30")).toEqual(Either.left("2026-02-30 is not a calendar date"))
  })

  it("consecutive days tile time: each is 24 hours and the next starts where it ends", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("1971-01-01"), max: new Date("2199-12-30"), noInvalidDate: true }),
        (date) => {
          const iso = date.toISOString().slice(0, 10)
          const d = Either.getOrThrow(Balance.day(iso))
          const next = new Date(Date.parse(`${iso}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
          const n = Either.getOrThrow(Balance.day(next))
          expect(DateTime.toEpochMillis(d.to) - DateTime.toEpochMillis(d.from)).toBe(86_400_000)
          expect(DateTime.toEpochMillis(n.from)).toBe(DateTime.toEpochMillis(d.to))
          expect(DateTime.toEpochMillis(d.from)).toBe(Date.parse(`${iso}T00:00:00+05:00`))
        }
      )
    )
  })
})

describe("csv", () => {
  const tenant = { merchantId: Ids.MerchantId.make(id), environment: "test" as const }

  it("a header, a line per movement in Maldives time, and a totals line of the column sums", () => {
    const rows = [
      Balance.transaction({
        transferId: `mandate-charge:${id}`,
        kind: "payment",
        net: 9_900,
        fee: 100,
        createdAt: at("2026-02-28T19:00:00Z")
      }),
      Balance.transaction({
        transferId: `refund:${id}`,
        kind: "refund",
        net: -4_000,
        fee: 0,
        createdAt: at("2026-03-01T18:59:59.999Z")
      })
    ]
    const day = Either.getOrThrow(Balance.day("2026-03-01"))
    const text = Balance.csv({ tenant, day, transactions: rows, totals: Balance.totals(rows) })
    expect(text.split("\r\n")).toEqual([
      "id,type,source_id,created_at,gross,fee,net",
      `mandate-charge:${id},charge,${id},2026-03-01T00:00:00+05:00,10000,100,9900`,
      `refund:${id},refund,${id},2026-03-01T23:59:59+05:00,-4000,0,-4000`,
      "total,,,2026-03-01,6000,100,5900",
      ""
    ])
  })

  it("quotes a cell that holds a separator or a quote", () => {
    const row = Balance.transaction({
      transferId: 'a,"b"',
      kind: "x",
      net: 1,
      fee: 0,
      createdAt: at("2026-03-01T00:00:00Z")
    })
    const day = Either.getOrThrow(Balance.day("2026-03-01"))
    const text = Balance.csv({ tenant, day, transactions: [row], totals: Balance.totals([row]) })
    expect(text.split("\r\n")[1]).toBe('"a,""b""",adjustment,"a,""b""",2026-03-01T05:00:00+05:00,1,0,1')
  })

  it("totals are the column sums, whatever the rows", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ net: fc.integer({ min: -1e9, max: 1e9 }), fee: fc.integer({ min: 0, max: 1e6 }) })
        ),
        (xs) => {
          const rows = xs.map((x, i) =>
            Balance.transaction({
              transferId: `t${i}`,
              kind: "payment",
              ...x,
              createdAt: at("2026-03-01T00:00:00Z")
            })
          )
          const t = Balance.totals(rows)
          expect(t).toEqual({
            count: xs.length,
            gross: xs.reduce((s, x) => s + x.net + x.fee, 0),
            fee: xs.reduce((s, x) => s + x.fee, 0),
            net: xs.reduce((s, x) => s + x.net, 0)
          })
        }
      )
    )
  })
})

describe("newestFirst and paymentsNewestFirst", () => {
  const ids = fc.constantFrom("a", "b", "c")
  const rows = fc.array(fc.record({ transferId: ids, createdAt: fc.integer({ min: 0, max: 3 }) }), {
    maxLength: 8
  })
  /** The order both must give: newest first, then transfer id descending. */
  const expected = (xs: ReadonlyArray<{ transferId: string; createdAt: number }>) =>
    [...xs].sort(
      (a, b) =>
        b.createdAt - a.createdAt || (a.transferId < b.transferId ? 1 : a.transferId > b.transferId ? -1 : 0)
    )

  it("sort newest first, ties by transfer id descending, equal rows equal", () => {
    fc.assert(
      fc.property(rows, (xs) => {
        const movements = xs.map((x) => ({
          transferId: x.transferId,
          kind: "payment",
          net: 1,
          fee: 0,
          createdAt: DateTime.unsafeMake(x.createdAt * 1000)
        }))
        const payments = xs.map((x) => ({
          transferId: x.transferId,
          merchantId: Ids.MerchantId.make(id),
          environment: "test" as const,
          amount: 1,
          createdAt: DateTime.unsafeMake(x.createdAt * 1000)
        }))
        const back = (r: { transferId: string; createdAt: DateTime.Utc }) => ({
          transferId: r.transferId,
          createdAt: DateTime.toEpochMillis(r.createdAt) / 1000
        })
        expect([...movements].sort(Balance.newestFirst).map(back)).toEqual(expected(xs))
        expect([...payments].sort(Balance.paymentsNewestFirst).map(back)).toEqual(expected(xs))
      })
    )
  })

  it("examples: later first; at one instant, the greater id first; the same row is 0", () => {
    const m = (transferId: string, s: number) => ({
      transferId,
      kind: "payment",
      net: 1,
      fee: 0,
      createdAt: DateTime.unsafeMake(s * 1000)
    })
    expect(Balance.newestFirst(m("a", 2), m("b", 1))).toBeLessThan(0)
    expect(Balance.newestFirst(m("a", 1), m("b", 2))).toBeGreaterThan(0)
    expect(Balance.newestFirst(m("b", 1), m("a", 1))).toBe(-1)
    expect(Balance.newestFirst(m("a", 1), m("b", 1))).toBe(1)
    expect(Balance.newestFirst(m("a", 1), m("a", 1))).toBe(0)
    const p = (transferId: string, s: number) => ({
      ...m(transferId, s),
      merchantId: Ids.MerchantId.make(id),
      environment: "test" as const,
      amount: 1
    })
    expect(Balance.paymentsNewestFirst(p("a", 2), p("b", 1))).toBeLessThan(0)
    expect(Balance.paymentsNewestFirst(p("a", 1), p("b", 2))).toBeGreaterThan(0)
    expect(Balance.paymentsNewestFirst(p("b", 1), p("a", 1))).toBe(-1)
    expect(Balance.paymentsNewestFirst(p("a", 1), p("b", 1))).toBe(1)
    expect(Balance.paymentsNewestFirst(p("a", 1), p("a", 1))).toBe(0)
  })
})
