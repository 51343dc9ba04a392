import { describe, expect, it } from "@effect/vitest"
import { Connector, Reconciliation } from "@laari/core"
import { DateTime, Either, Schema } from "effect"
import fc from "fast-check"

const date = "2026-12-02"
const day = Either.getOrThrow(Reconciliation.day(date))
const dayMs = DateTime.toEpochMillis(day.from)

/** An instant on the day, whole seconds (the protocol's), anywhere from 00:00:00 to 23:59:59 Maldives time. */
const onDay = fc.integer({ min: 0, max: 86_399 }).map((s) => DateTime.unsafeMake(dayMs + s * 1000))
/** An instant of the day before or the day after. */
const offDay = fc.oneof(
  fc.integer({ min: 1, max: 86_400 }).map((s) => DateTime.unsafeMake(dayMs - s * 1000)),
  fc.integer({ min: 0, max: 86_399 }).map((s) => DateTime.unsafeMake(dayMs + 86_400_000 + s * 1000))
)

/** A transfer both sides agree on: posted on the day, amount above 0, fee from 0 to the amount. */
const agreed = fc
  .record({
    id: fc.uuid({ version: 4 }),
    amount: fc.integer({ min: 1, max: 10_000_000 }),
    postedAt: onDay
  })
  .chain((t) => fc.record({ fee: fc.integer({ min: 0, max: t.amount }) }).map(({ fee }) => ({ ...t, fee })))

const transfers = fc.uniqueArray(agreed, { selector: (t) => t.id, maxLength: 40 })

type Transfer = typeof agreed extends fc.Arbitrary<infer T> ? T : never

const heldOf = (t: Transfer): Reconciliation.Held => ({ ...t, status: "posted" })
const lineOf = (t: Transfer): Reconciliation.Line => ({ ...t })

const totalsOf = (ts: ReadonlyArray<{ readonly amount: number; readonly fee: number }>) => ({
  count: ts.length,
  amount: ts.reduce((n, t) => n + t.amount, 0),
  fee: ts.reduce((n, t) => n + t.fee, 0)
})

/** One discrepancy made of a transfer, the break it must give, and both sides with it. */
interface Injected {
  readonly held: ReadonlyArray<Reconciliation.Held>
  readonly lines: ReadonlyArray<Reconciliation.Line>
  readonly expected: Reconciliation.Break
}

const discrepancy: fc.Arbitrary<(t: Transfer) => Injected> = fc.oneof(
  // laari posted it on the day; the core's statement lacks it.
  fc.constant((t: Transfer) => ({
    held: [heldOf(t)],
    lines: [],
    expected: {
      transferId: t.id,
      kind: "missing_in_core" as const,
      laari: { amount: t.amount, fee: t.fee, status: "posted" as const },
      core: null
    }
  })),
  // The core lists an id laari has no movement of.
  fc.constant((t: Transfer) => ({
    held: [],
    lines: [lineOf(t)],
    expected: {
      transferId: t.id,
      kind: "missing_in_laari" as const,
      laari: null,
      core: { amount: t.amount, fee: t.fee, status: "posted" as const }
    }
  })),
  // Another amount, or another fee, on one side.
  fc
    .tuple(fc.integer({ min: 1, max: 1000 }), fc.boolean(), fc.boolean())
    .map(([delta, onAmount, inLaari]) => (t: Transfer) => {
      const changed = onAmount ? { ...t, amount: t.amount + delta } : { ...t, fee: t.fee + delta }
      const [ours, theirs] = inLaari ? [changed, t] : [t, changed]
      // A raised fee stays within a raised amount: the figures stay a payment's.
      const payment = (x: Transfer) => ({ ...x, amount: Math.max(x.amount, x.fee) })
      const l = payment(ours)
      const c = payment(theirs)
      return {
        held: [heldOf(l)],
        lines: [lineOf(c)],
        expected: {
          transferId: t.id,
          kind: "amount_mismatch" as const,
          laari: { amount: l.amount, fee: l.fee, status: "posted" as const },
          core: { amount: c.amount, fee: c.fee, status: "posted" as const }
        }
      }
    }),
  // The core posted it; laari holds it pending, refused or cancelled, its posted_at anything.
  fc
    .tuple(
      fc.constantFrom("pending", "refused", "cancelled") as fc.Arbitrary<"pending" | "refused" | "cancelled">,
      fc.option(offDay, { nil: null })
    )
    .map(([status, postedAt]) => (t: Transfer) => ({
      held: [{ ...heldOf(t), status, postedAt }],
      lines: [lineOf(t)],
      expected: {
        transferId: t.id,
        kind: "status_mismatch" as const,
        laari: { amount: t.amount, fee: t.fee, status },
        core: { amount: t.amount, fee: t.fee, status: "posted" as const }
      }
    }))
)

describe("compute", () => {
  it("two sides holding the same transfers have no break, and equal totals", () => {
    fc.assert(
      fc.property(transfers, fc.boolean(), (ts, reversed) => {
        const held = ts.map(heldOf)
        const lines = (reversed ? [...ts].reverse() : ts).map(lineOf)
        const result = Reconciliation.compute(day, held, lines)
        expect(result.breaks).toEqual([])
        expect(result.laari).toEqual(totalsOf(ts))
        expect(result.core).toEqual(totalsOf(ts))
        expect(Reconciliation.statusOf(result)).toBe("clean")
      })
    )
  })

  it("each injected discrepancy gives exactly its break, with both sides' figures", () => {
    fc.assert(
      fc.property(
        transfers,
        fc.uniqueArray(fc.tuple(agreed, discrepancy), {
          selector: ([t]) => t.id,
          minLength: 1,
          maxLength: 6
        }),
        (ts, injected) => {
          const clean = ts.filter((t) => !injected.some(([u]) => u.id === t.id))
          const made = injected.map(([t, make]) => make(t))
          const held = [...clean.map(heldOf), ...made.flatMap((m) => m.held)]
          const lines = [...made.flatMap((m) => m.lines), ...clean.map(lineOf)]
          const result = Reconciliation.compute(day, held, lines)
          const expected = made.map((m) => m.expected).sort((a, b) => (a.transferId < b.transferId ? -1 : 1))
          expect(result.breaks).toEqual(expected)
          expect(Reconciliation.statusOf(result)).toBe("breaks")
          // Each side's totals are its own: laari's posted movements of the day, the statement's lines.
          expect(result.laari).toEqual(totalsOf(held.filter((m) => m.status === "posted")))
          expect(result.core).toEqual(totalsOf(lines))
        }
      )
    )
  })

  it("a movement neither posted on the day nor listed is no break of the day", () => {
    fc.assert(
      fc.property(
        transfers,
        agreed,
        fc.constantFrom("pending", "posted", "refused", "cancelled") as fc.Arbitrary<
          Reconciliation.Held["status"]
        >,
        offDay,
        (ts, t, status, postedAt) => {
          fc.pre(!ts.some((u) => u.id === t.id))
          const other: Reconciliation.Held = { ...t, status, postedAt: status === "posted" ? postedAt : null }
          const result = Reconciliation.compute(day, [...ts.map(heldOf), other], ts.map(lineOf))
          expect(result.breaks).toEqual([])
          expect(result.laari).toEqual(totalsOf(ts))
        }
      )
    )
  })

  it("a movement posted on another day that the core lists on this one agrees when its figures do", () => {
    fc.assert(
      fc.property(agreed, offDay, (t, postedAt) => {
        const result = Reconciliation.compute(day, [{ ...heldOf(t), postedAt }], [lineOf(t)])
        expect(result.breaks).toEqual([])
        // Counted on the day laari holds it posted, not this one.
        expect(result.laari).toEqual({ count: 0, amount: 0, fee: 0 })
      })
    )
  })

  it("a movement read twice (posted on the day and listed) counts once", () => {
    fc.assert(
      fc.property(agreed, (t) => {
        const result = Reconciliation.compute(day, [heldOf(t), heldOf(t)], [lineOf(t)])
        expect(result.breaks).toEqual([])
        expect(result.laari).toEqual(totalsOf([t]))
      })
    )
  })

  it("the day's bounds are Maldives midnights: 00:00:00 is on it, 24:00:00 is the next day's", () => {
    const at = (iso: string) => DateTime.unsafeMake(iso)
    const id = "0b9f3c2e-4a1d-4c7e-9f21-5d6a7b8c9d0e"
    const posted = (postedAt: DateTime.Utc): Reconciliation.Held => ({
      id,
      status: "posted",
      amount: 100,
      fee: 0,
      postedAt
    })
    expect(Reconciliation.compute(day, [posted(at("2026-12-01T19:00:00Z"))], []).breaks).toHaveLength(1)
    expect(Reconciliation.compute(day, [posted(at("2026-12-02T18:59:59Z"))], []).breaks).toHaveLength(1)
    expect(Reconciliation.compute(day, [posted(at("2026-12-01T18:59:59Z"))], []).breaks).toEqual([])
    expect(Reconciliation.compute(day, [posted(at("2026-12-02T19:00:00Z"))], []).breaks).toEqual([])
  })

  it("only a posting on the day counts as laari's: a movement not posted, or without a time, is none", () => {
    fc.assert(
      fc.property(
        agreed,
        fc.constantFrom("pending", "refused", "cancelled") as fc.Arbitrary<
          "pending" | "refused" | "cancelled"
        >,
        (t, status) => {
          const result = Reconciliation.compute(day, [{ ...heldOf(t), status }], [])
          expect(result.breaks).toEqual([])
          expect(result.laari).toEqual(totalsOf([]))
          // Posted, its time not yet known: not on the day either.
          const unknown = Reconciliation.compute(day, [{ ...heldOf(t), postedAt: null }], [])
          expect(unknown.breaks).toEqual([])
          expect(unknown.laari).toEqual(totalsOf([]))
          // The same movement posted on the day is laari's: the core's statement lacks it.
          expect(Reconciliation.compute(day, [heldOf(t)], []).breaks.map((b) => b.kind)).toEqual([
            "missing_in_core"
          ])
        }
      )
    )
  })
})

describe("the statement", () => {
  const item = {
    id: "0B9F3C2E-4A1D-4C7E-9F21-5D6A7B8C9D0E",
    from: "w-customer",
    to: "w-merchant",
    amount: 10_000,
    fee: { to: "w-laari", amount: 150 },
    kind: "payment" as const,
    posted_at: "2026-12-02T14:05:09+05:00"
  }

  it("a line reads its id in lower case, its fee's amount, 0 for no fee, and its posted_at", () => {
    const decoded = Schema.decodeUnknownSync(Connector.StatementItem)(item)
    expect(Reconciliation.lineOf(decoded)).toEqual({
      id: item.id.toLowerCase(),
      amount: 10_000,
      fee: 150,
      postedAt: DateTime.unsafeMake("2026-12-02T09:05:09Z")
    })
    expect(Reconciliation.lineOf({ ...decoded, fee: null }).fee).toBe(0)
  })

  it("faults: an id listed twice, a line posted on another day; none in a statement of the day", () => {
    fc.assert(
      fc.property(transfers, (ts) => {
        expect(Reconciliation.statementFaults(day, ts.map(lineOf))).toEqual([])
      })
    )
    const line = Reconciliation.lineOf(Schema.decodeUnknownSync(Connector.StatementItem)(item))
    expect(Reconciliation.statementFaults(day, [line, line])).toEqual([
      `transfer ${line.id} is listed more than once`
    ])
    const late = { ...line, postedAt: DateTime.unsafeMake("2026-12-02T19:00:00Z") }
    expect(Reconciliation.statementFaults(day, [late])).toEqual([
      `transfer ${line.id} is listed with posted_at 2026-12-03T00:00:00+05:00, not on 2026-12-02`
    ])
  })
})

describe("the daily run", () => {
  it("a date is the Maldives calendar day an instant falls on", () => {
    expect(Reconciliation.dateOf(DateTime.unsafeMake("2026-12-01T19:00:00Z"))).toBe("2026-12-02")
    expect(Reconciliation.dateOf(DateTime.unsafeMake("2026-12-01T18:59:59Z"))).toBe("2026-12-01")
  })

  it("one run of a day at a time, saying where to read it", () => {
    expect(Reconciliation.RunInProgress.of("2026-12-02").message).toBe(
      "A reconciliation of 2026-12-02 is already running; read it with GET /ops/reconciliation/runs/2026-12-02 once it is done"
    )
  })

  it("reconciles the day before from 01:00 Maldives time, and until then the one before that", () => {
    const due = (iso: string) => Reconciliation.dueDate(DateTime.unsafeMake(iso))
    // 01:00 on the 3rd, Maldives time, is 20:00 UTC on the 2nd.
    expect(due("2026-12-02T20:00:00Z")).toBe("2026-12-02")
    expect(due("2026-12-02T19:59:59Z")).toBe("2026-12-01")
    // Midnight of the 3rd: the 2nd has just ended, not yet settled.
    expect(due("2026-12-02T19:00:00Z")).toBe("2026-12-01")
    expect(due("2026-12-03T18:59:59Z")).toBe("2026-12-02")
    // Across a month and a year.
    expect(due("2026-12-31T20:00:00Z")).toBe("2026-12-31")
    expect(due("2027-01-01T02:00:00Z")).toBe("2026-12-31")
  })

  it("is always a day that ended at least an hour before, and at most a day and an hour", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2001, 0, 1), max: Date.UTC(2099, 0, 1) }), (ms) => {
        const now = DateTime.unsafeMake(ms)
        const d = Either.getOrThrow(Reconciliation.day(Reconciliation.dueDate(now)))
        const since = ms - DateTime.toEpochMillis(d.to)
        expect(since).toBeGreaterThanOrEqual(3_600_000)
        expect(since).toBeLessThan(25 * 3_600_000)
      })
    )
  })
})

describe("countByKind", () => {
  it("counts each kind, every kind present", () => {
    expect(
      Reconciliation.countByKind([
        { kind: "missing_in_core" },
        { kind: "missing_in_core" },
        { kind: "status_mismatch" }
      ])
    ).toEqual({ missing_in_core: 2, missing_in_laari: 0, amount_mismatch: 0, status_mismatch: 1 })
  })
})
