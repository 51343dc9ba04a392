import { describe, expect, it } from "@effect/vitest"
import { Connector, Wallet } from "@laari/core"
import { Either, Option, ParseResult, Schema } from "effect"

const id = "0b9f3c2e-4a1d-4c7e-9f21-5d6a7b8c9d0e"

const request = {
  id,
  environment: "live",
  from: "w-customer",
  to: "w-merchant",
  amount: 10_000,
  fee: { to: "w-laari", amount: 150 },
  memo: "Coffee subscription, December",
  kind: "payment"
}

/** The messages of a failed decode, each with its path. */
const problems = <A, I>(schema: Schema.Schema<A, I>, input: unknown): ReadonlyArray<string> =>
  Either.match(Schema.decodeUnknownEither(schema, { errors: "all" })(input), {
    onLeft: (e) =>
      ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => `${i.path.join(".")}: ${i.message}`),
    onRight: () => []
  })

describe("Connector schemas", () => {
  it("a transfer request decodes, with and without a fee, and encodes to the same body", () => {
    expect(Schema.decodeUnknownSync(Connector.TransferRequest)(request)).toEqual(request)
    const noFee = { ...request, fee: null, kind: "reversal" }
    expect(
      Schema.encodeSync(Connector.TransferRequest)(Schema.decodeUnknownSync(Connector.TransferRequest)(noFee))
    ).toEqual(noFee)
  })

  it("a transfer request is refused naming each broken rule", () => {
    expect(problems(Connector.TransferRequest, { ...request, id: "charge-1" })).toEqual([
      "id: must be a UUID"
    ])
    expect(problems(Connector.TransferRequest, { ...request, amount: 0 })).toEqual([
      "amount: must be 1 or more"
    ])
    expect(problems(Connector.TransferRequest, { ...request, amount: 1.5 })).toEqual([
      "amount: must be a whole number of laari"
    ])
    expect(problems(Connector.TransferRequest, { ...request, fee: { to: "w-laari", amount: -1 } })).toContain(
      "fee.amount: must be 0 or more"
    )
    expect(
      problems(Connector.TransferRequest, { ...request, fee: { to: "w-laari", amount: 10_001 } })
    ).toEqual(["fee.amount: must not be more than amount"])
    expect(problems(Connector.TransferRequest, { ...request, memo: "x".repeat(141) })).toEqual([
      "memo: must be at most 140 characters"
    ])
    expect(problems(Connector.TransferRequest, { ...request, from: "" })).toEqual(["from: must not be empty"])
    expect(problems(Connector.TransferRequest, { ...request, kind: "refund" }).length).toBeGreaterThan(0)
    expect(problems(Connector.TransferRequest, { ...request, environment: "prod" }).length).toBeGreaterThan(0)
    // A fee equal to the amount is still a transfer: `to` receives nothing.
    expect(
      problems(Connector.TransferRequest, { ...request, fee: { to: "w-laari", amount: 10_000 } })
    ).toEqual([])
    expect(problems(Connector.TransferRequest, { ...request, memo: "x".repeat(140) })).toEqual([])
  })

  it("each answer to POST /transfers decodes as its own status, and a broken one does not", () => {
    const posted = { id, status: "posted", posted_at: "2026-12-02T14:05:09+05:00" }
    const refused = { id, status: "refused", reason: "insufficient_balance" }
    const cancelled = { id, status: "cancelled" }
    for (const answer of [posted, refused, cancelled])
      expect(Schema.decodeUnknownSync(Connector.TransferAnswer)(answer)).toEqual(answer)
    expect(
      problems(Connector.TransferAnswer, { ...posted, posted_at: "2026-12-02T09:05:09Z" }).length
    ).toBeGreaterThan(0)
    expect(
      problems(Connector.TransferAnswer, { ...posted, posted_at: "2026-12-02T14:05:09.5+05:00" }).length
    ).toBeGreaterThan(0)
    expect(problems(Connector.TransferAnswer, { ...refused, reason: "no_money" }).length).toBeGreaterThan(0)
    expect(problems(Connector.TransferAnswer, { id, status: "pending" }).length).toBeGreaterThan(0)
    expect(
      problems(Connector.TransferAnswer, { status: "posted", posted_at: posted.posted_at }).length
    ).toBeGreaterThan(0)
  })

  it("a transfer read carries what was asked with its status", () => {
    const posted = { ...request, status: "posted", posted_at: "2026-12-02T14:05:09+05:00" }
    expect(Schema.decodeUnknownSync(Connector.Transfer)(posted)).toEqual(posted)
    expect(Schema.decodeUnknownSync(Connector.Transfer)({ id, status: "cancelled" })).toEqual({
      id,
      status: "cancelled"
    })
    expect(problems(Connector.Transfer, { ...request, status: "posted" }).length).toBeGreaterThan(0)
  })

  it("a wallet decodes; a bad phone, status, limit or zone does not", () => {
    const wallet = {
      id: "w-1",
      phone: "+9607771234",
      status: "active",
      limit: null,
      time_zone: "Indian/Maldives"
    }
    expect(Schema.decodeUnknownSync(Connector.Wallet)(wallet)).toEqual(wallet)
    expect(Schema.decodeUnknownSync(Connector.Wallet)({ ...wallet, limit: 500_000 })).toEqual({
      ...wallet,
      limit: 500_000
    })
    expect(problems(Connector.Wallet, { ...wallet, phone: "7771234" })).toEqual([
      "phone: must be +960 followed by seven digits"
    ])
    expect(problems(Connector.Wallet, { ...wallet, time_zone: "Mars/Olympus" })).toEqual([
      "time_zone: must be an IANA time zone such as Indian/Maldives"
    ])
    expect(problems(Connector.Wallet, { ...wallet, status: "closed" }).length).toBeGreaterThan(0)
    expect(problems(Connector.Wallet, { ...wallet, limit: -1 }).length).toBeGreaterThan(0)
  })

  it("a statement page decodes; more than 100 transfers or a bad item does not", () => {
    const item = {
      id,
      from: "a",
      to: "b",
      amount: 100,
      fee: null,
      kind: "payment",
      posted_at: "2026-12-02T14:05:09+05:00"
    }
    const page = { transfers: [item], next_cursor: null }
    expect(Schema.decodeUnknownSync(Connector.StatementPage)(page)).toEqual(page)
    expect(
      Schema.decodeUnknownSync(Connector.StatementPage)({ ...page, next_cursor: "abc" }).next_cursor
    ).toBe("abc")
    expect(
      problems(Connector.StatementPage, { transfers: Array(101).fill(item), next_cursor: null })
    ).toEqual(["transfers: must hold at most 100 transfers"])
    expect(
      problems(Connector.StatementPage, { transfers: [{ ...item, amount: 0 }], next_cursor: null })
    ).toEqual(["transfers.0.amount: must be 1 or more"])
  })

  it("a posted_on is a real date", () => {
    expect(problems(Connector.PostedOn, "2026-12-02")).toEqual([])
    expect(problems(Connector.PostedOn, "2026-02-30")).toEqual([": must be a date YYYY-MM-DD"])
    expect(problems(Connector.PostedOn, "2026-12-2")).toEqual([": must be a date YYYY-MM-DD"])
  })

  it("a posted_on is YYYY-MM-DD only, not another form of ISO 8601 that Temporal reads as the same day", () => {
    for (const other of ["20261202", "+002026-12-02", "2026-12-02T10:00:00", "2026-12-02Z"])
      expect(problems(Connector.PostedOn, other), other).toEqual([": must be a date YYYY-MM-DD"])
  })

  it("a posted_at is refused naming its rule", () => {
    const rule = "must be an ISO 8601 date-time with a numeric UTC offset and no fractional seconds"
    for (const bad of ["2026-12-02T09:05:09Z", "2026-12-02T14:05:09.5+05:00", "2026-12-02"])
      expect(problems(Connector.PostedAt, bad), bad).toEqual([`: ${rule}`])
    expect(problems(Connector.PostedAt, "2026-12-02T14:05:09+05:00")).toEqual([])
  })

  it("each text's length limit is refused naming the limit", () => {
    expect(problems(Connector.WalletId, "w".repeat(255))).toEqual([])
    expect(problems(Connector.WalletId, "w".repeat(256))).toEqual([": must be at most 255 characters"])
    expect(problems(Connector.Cursor, "c".repeat(1001))).toEqual([": must be at most 1000 characters"])
    expect(problems(Connector.TransferRequest, { ...request, to: "w".repeat(256) })).toEqual([
      "to: must be at most 255 characters"
    ])
    expect(problems(Connector.ErrorBody, { code: "conflict", message: "m".repeat(1001) })).toEqual([
      "message: must be at most 1000 characters"
    ])
    expect(problems(Connector.ErrorBody, { code: "conflict", message: "m".repeat(1000) })).toEqual([])
  })

  it("a phone or a time zone too long for its rule is refused with the rule's own words", () => {
    expect(problems(Connector.Phone, "+96077712345678")).toEqual([": must be +960 followed by seven digits"])
    expect(problems(Connector.TimeZone, `Indian/${"M".repeat(60)}`)).toEqual([
      ": must be an IANA time zone such as Indian/Maldives"
    ])
    expect(problems(Connector.TimeZone, "Indian/Maldives")).toEqual([])
  })

  it("cancel's answer and the error body decode; unknown values do not", () => {
    for (const status of ["cancelled", "posted", "refused"])
      expect(Schema.decodeUnknownSync(Connector.CancelAnswer)({ status })).toEqual({ status })
    expect(problems(Connector.CancelAnswer, { status: "pending" }).length).toBeGreaterThan(0)
    expect(Schema.decodeUnknownSync(Connector.ErrorBody)({ code: "conflict", message: "m" })).toEqual({
      code: "conflict",
      message: "m"
    })
    expect(problems(Connector.ErrorBody, { code: "teapot", message: "m" }).length).toBeGreaterThan(0)
  })

  it("a Request-Id is 1 to 200 visible ASCII characters", () => {
    expect(problems(Connector.RequestId, "5b0c0b8e-1f7a-4d3e-9a51-0c2b7d1e9f00")).toEqual([])
    for (const bad of ["", "two words", "x".repeat(201), "é"])
      expect(problems(Connector.RequestId, bad), bad).toEqual([": must be 1 to 200 visible ASCII characters"])
  })

  it("every refusal of the protocol maps to core's and back; executor-error has none", () => {
    for (const reason of Connector.RefusalReason.literals) {
      const domain = Connector.toWalletRefusal[reason]
      expect(Wallet.RefusalReason.literals).toContain(domain)
      expect(Connector.fromWalletRefusal(domain)).toEqual(Option.some(reason))
    }
    expect(Connector.fromWalletRefusal("executor-error")).toEqual(Option.none())
  })
})
