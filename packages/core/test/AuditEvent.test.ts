import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { AuditEvent } from "@laari/core"
import { DateTime, Schema } from "effect"
import * as fc from "fast-check"

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

const entry = fc.record({
  merchantId: fc.option(fc.uuid(), { nil: null }),
  environment: fc.constantFrom("test" as const, "live" as const, null),
  actor: fc.record({
    kind: fc.constantFrom(...AuditEvent.ActorKind.literals),
    id: fc.string({ minLength: 1, maxLength: 12 })
  }),
  action: fc.constantFrom("refund.create", "mandate.revoke", "key.create", "webhook_endpoint.update"),
  resourceType: fc.constantFrom("refund", "mandate", "key", "webhook_endpoint"),
  resourceId: fc.option(fc.uuid(), { nil: null }),
  summary: fc.dictionary(
    fc.string({ minLength: 1, maxLength: 8 }),
    fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null)),
    { maxKeys: 4 }
  ),
  address: fc.option(fc.ipV4(), { nil: null }),
  userAgent: fc.option(fc.string({ maxLength: 20 }), { nil: null }),
  requestId: fc.option(fc.uuid(), { nil: null }),
  at: fc
    .integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2030, 0, 1) })
    .map((ms) => DateTime.unsafeMake(ms))
})

/** A chain of `entries` as the writer makes it. */
const chainOf = (entries: ReadonlyArray<AuditEvent.Entry>, chain = "merchant:m"): Array<AuditEvent.Event> => {
  const rows: Array<AuditEvent.Event> = []
  for (const [i, e] of entries.entries()) {
    const place = AuditEvent.next(rows.at(-1))
    const row = { ...e, id: `row-${i}`, chain, ...place }
    rows.push({ ...row, hash: sha256(AuditEvent.hashInput(row)) })
  }
  return rows
}

/** The first break, as `laari audit verify` finds it: row by row, then the end against the head. */
const firstBreak = (rows: ReadonlyArray<AuditEvent.Event>, head: AuditEvent.Head | undefined) => {
  let before: AuditEvent.Head | undefined
  for (const row of rows) {
    const broken = AuditEvent.check(before, row, sha256(AuditEvent.hashInput(row)))
    if (broken !== undefined) return broken
    before = { seq: row.seq, hash: row.hash }
  }
  return AuditEvent.checkEnd(before, head)
}

const headOf = (rows: ReadonlyArray<AuditEvent.Event>): AuditEvent.Head | undefined => {
  const last = rows.at(-1)
  return last === undefined ? undefined : { seq: last.seq, hash: last.hash }
}

/** One field of a row changed to something else, as someone editing the table would. */
const edits: ReadonlyArray<readonly [string, (row: AuditEvent.Event) => AuditEvent.Event]> = [
  ["action", (r) => ({ ...r, action: `${r.action}x` })],
  ["actor", (r) => ({ ...r, actor: { ...r.actor, id: `${r.actor.id}x` } })],
  ["merchantId", (r) => ({ ...r, merchantId: r.merchantId === null ? "m2" : null })],
  ["environment", (r) => ({ ...r, environment: r.environment === "live" ? "test" : "live" })],
  ["resourceId", (r) => ({ ...r, resourceId: r.resourceId === null ? "x" : null })],
  ["summary", (r) => ({ ...r, summary: { ...r.summary, amount: 1 } })],
  ["address", (r) => ({ ...r, address: r.address === null ? "10.0.0.1" : null })],
  ["userAgent", (r) => ({ ...r, userAgent: `${r.userAgent ?? ""}x` })],
  ["requestId", (r) => ({ ...r, requestId: r.requestId === null ? "r" : null })],
  ["at", (r) => ({ ...r, at: DateTime.add(r.at, { millis: 1 }) })],
  ["id", (r) => ({ ...r, id: `${r.id}x` })],
  ["chain", (r) => ({ ...r, chain: "merchant:other" })]
]

describe("AuditEvent: the chain", () => {
  it("a chain as written verifies, whatever its rows hold (the check accepts what it must)", () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 12 }), (entries) => {
        const rows = chainOf(entries)
        expect(firstBreak(rows, headOf(rows))).toBeUndefined()
        expect(rows.map((r) => r.seq)).toEqual(entries.map((_, i) => i + 1))
      })
    )
  })

  it.each(edits)("an edit of %s anywhere is found at that row", (_, edit) => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 8 }), fc.nat(), (entries, pick) => {
        const rows = chainOf(entries)
        const at = pick % rows.length
        const head = headOf(rows)
        rows[at] = edit(rows[at]!)
        expect(firstBreak(rows, head)).toEqual({ _tag: "edited", seq: at + 1, id: rows[at]!.id })
      })
    )
  })

  it("an edit that also recomputes the row's hash breaks the next row's link, or the head", () => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 8 }), fc.nat(), (entries, pick) => {
        const rows = chainOf(entries)
        const at = pick % rows.length
        const head = headOf(rows)
        const changed = { ...rows[at]!, action: "refund.create.forged" }
        rows[at] = { ...changed, hash: sha256(AuditEvent.hashInput(changed)) }
        const broken = firstBreak(rows, head)
        expect(broken?._tag).toBe(at === rows.length - 1 ? "truncated" : "unlinked")
        if (broken?._tag === "unlinked") expect(broken.seq).toBe(at + 2)
      })
    )
  })

  it("a row deleted is found at the row after it; the last rows deleted, at the head", () => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 8 }), fc.nat(), (entries, pick) => {
        const rows = chainOf(entries)
        const at = pick % rows.length
        const head = headOf(rows)
        rows.splice(at, 1)
        const broken = firstBreak(rows, head)
        if (at === rows.length) expect(broken).toEqual({ _tag: "truncated", seq: at, headSeq: at + 1 })
        else expect(broken).toMatchObject({ _tag: "unlinked", seq: at + 2, expectedSeq: at + 1 })
      })
    )
  })

  it("a row inserted, even with a hash of its own, breaks the chain", () => {
    fc.assert(
      fc.property(
        fc.array(entry, { minLength: 1, maxLength: 8 }),
        entry,
        fc.nat(),
        (entries, extra, pick) => {
          const rows = chainOf(entries)
          const at = pick % (rows.length + 1)
          const head = headOf(rows)
          const place = AuditEvent.next(at === 0 ? undefined : { seq: at, hash: rows[at - 1]!.hash })
          const forged = { ...extra, id: "forged", chain: "merchant:m", ...place }
          rows.splice(at, 0, { ...forged, hash: sha256(AuditEvent.hashInput(forged)) })
          expect(firstBreak(rows, head)).toBeDefined()
        }
      )
    )
  })

  it("a summary's key order does not change the hash; its content does", () => {
    const [row] = chainOf([
      {
        merchantId: null,
        environment: null,
        actor: { kind: "ops_token", id: "ops" },
        action: "merchant.create",
        resourceType: "merchant",
        resourceId: "m",
        summary: { name: "Cafe", outlets: 1 },
        address: null,
        userAgent: null,
        requestId: null,
        at: DateTime.unsafeMake("2026-12-07T10:00:00.123Z")
      }
    ])
    const reordered = { ...row!, summary: { outlets: 1, name: "Cafe" } }
    expect(AuditEvent.check(undefined, reordered, sha256(AuditEvent.hashInput(reordered)))).toBeUndefined()
    expect(AuditEvent.hashInput(row!)).toContain('"at":"2026-12-07T10:00:00.123Z"')
    const changed = { ...row!, summary: { name: "Cafe", outlets: 2 } }
    expect(AuditEvent.check(undefined, changed, sha256(AuditEvent.hashInput(changed)))?._tag).toBe("edited")
  })

  it("a row out of place is unlinked even when its link and its own hash hold", () => {
    fc.assert(
      fc.property(
        fc.array(entry, { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.integer({ min: -3, max: 3 }).filter((d) => d !== 0),
        (entries, pick, shift) => {
          const rows = chainOf(entries)
          const at = pick % rows.length
          const before = at === 0 ? undefined : { seq: rows[at - 1]!.seq, hash: rows[at - 1]!.hash }
          const moved = { ...rows[at]!, seq: rows[at]!.seq + shift }
          const row = { ...moved, hash: sha256(AuditEvent.hashInput(moved)) }
          expect(AuditEvent.check(before, row, row.hash)).toEqual({
            _tag: "unlinked",
            seq: at + 1 + shift,
            id: row.id,
            expectedSeq: at + 1
          })
        }
      )
    )
  })

  it("the end check wants the head's seq and hash both, whichever side is missing", () => {
    const a = { seq: 3, hash: "a".repeat(64) }
    expect(AuditEvent.checkEnd(undefined, undefined)).toBeUndefined()
    expect(AuditEvent.checkEnd(a, { ...a })).toBeUndefined()
    expect(AuditEvent.checkEnd(undefined, { seq: 0, hash: AuditEvent.Genesis })).toBeUndefined()
    // The same hash at another seq: the head was rewritten.
    expect(AuditEvent.checkEnd(a, { ...a, seq: 4 })).toEqual({ _tag: "truncated", seq: 3, headSeq: 4 })
    expect(AuditEvent.checkEnd({ ...a, seq: 4 }, a)).toEqual({ _tag: "truncated", seq: 4, headSeq: 3 })
    // The same seq with another hash: the last row was replaced.
    expect(AuditEvent.checkEnd(a, { ...a, hash: "b".repeat(64) })).toEqual({
      _tag: "truncated",
      seq: 3,
      headSeq: 3
    })
    // Rows but no head, or a head but no rows.
    expect(AuditEvent.checkEnd(a, undefined)).toEqual({ _tag: "truncated", seq: 3, headSeq: 0 })
    expect(AuditEvent.checkEnd(undefined, a)).toEqual({ _tag: "truncated", seq: 0, headSeq: 3 })
    expect(AuditEvent.checkEnd({ seq: 1, hash: AuditEvent.Genesis }, undefined)).toEqual({
      _tag: "truncated",
      seq: 1,
      headSeq: 0
    })
  })

  const fixed: Omit<AuditEvent.Event, "hash"> = {
    id: "row-0",
    chain: "operator",
    seq: 1,
    prevHash: AuditEvent.Genesis,
    merchantId: null,
    environment: null,
    actor: { kind: "ops_token", id: "ops" },
    action: "merchant.create",
    resourceType: "merchant",
    resourceId: "m",
    summary: { outlets: 1, name: "Cafe" },
    address: null,
    userAgent: null,
    requestId: null,
    at: DateTime.unsafeMake("2026-12-07T10:00:00.123Z")
  }

  it("the hash input is one exact text: compact JSON, every object's keys in code-point order", () => {
    // Hashes already written were taken of this text: a change to it breaks every chain there is.
    expect(AuditEvent.hashInput(fixed)).toBe(
      `{"action":"merchant.create","actor":{"id":"ops","kind":"ops_token"},"address":null,` +
        `"at":"2026-12-07T10:00:00.123Z","chain":"operator","environment":null,"id":"row-0",` +
        `"merchantId":null,"prevHash":"${"0".repeat(64)}","requestId":null,"resourceId":"m",` +
        `"resourceType":"merchant","seq":1,"summary":{"name":"Cafe","outlets":1},"userAgent":null}`
    )
    const summary = { b: 1, a: "x", B: true, é: null, "10": 2, "9": 3 }
    expect(AuditEvent.hashInput({ ...fixed, summary })).toContain(
      `"summary":{"10":2,"9":3,"B":true,"a":"x","b":1,"é":null}`
    )
  })

  it("the hash input is JSON of every field but the hash, whatever the row holds", () => {
    fc.assert(
      fc.property(entry, fc.nat({ max: 1000 }), (e, seq) => {
        const row = { ...e, id: `row-${seq}`, chain: "merchant:m", seq: seq + 1, prevHash: "f".repeat(64) }
        expect(JSON.parse(AuditEvent.hashInput(row))).toEqual({ ...row, at: DateTime.formatIso(row.at) })
      })
    )
    // A store reads a summary back as JSON without decoding it: an array a hand edit put there is still
    // written as the array it is.
    const summary = { items: [1, "two", null, { b: 1, a: 2 }] } as unknown as AuditEvent.Summary
    const text = AuditEvent.hashInput({ ...fixed, summary })
    expect(text).toContain(`"summary":{"items":[1,"two",null,{"a":2,"b":1}]}`)
    expect(JSON.parse(text).summary).toEqual(summary)
  })

  it("describes each break naming the chain and the row", () => {
    expect(AuditEvent.describe("merchant:m", { _tag: "edited", seq: 3, id: "r3" })).toBe(
      "merchant:m: row 3 (r3) was changed after it was written"
    )
    expect(AuditEvent.describe("operator", { _tag: "unlinked", seq: 5, id: "r5", expectedSeq: 4 })).toBe(
      "operator: row 5 (r5) comes where row 4 should: a row was deleted or inserted"
    )
    expect(AuditEvent.describe("operator", { _tag: "unlinked", seq: 4, id: "r4", expectedSeq: 4 })).toBe(
      "operator: row 4 (r4) does not follow the row before it: a row was replaced"
    )
    expect(AuditEvent.describe("merchant:m", { _tag: "truncated", seq: 2, headSeq: 4 })).toBe(
      "merchant:m: the chain ends at row 2, but its head is row 4: rows were deleted or the head changed"
    )
    expect(AuditEvent.chainOf(null)).toBe("operator")
    expect(AuditEvent.chainOf("m1")).toBe("merchant:m1")
  })
})

describe("AuditEvent.summarize", () => {
  const decodes = Schema.is(AuditEvent.Summary)

  it("keeps flat values, sorted, under dotted names, and cuts long texts", () => {
    expect(
      AuditEvent.summarize({
        reason: "customer asked",
        amount: 1500,
        metadata: { order: "A-1", deep: { deeper: { deepest: 1 } } },
        items: [1, 2, 3],
        one: ["x"],
        note: "x".repeat(300),
        ratio: 1.5,
        skipped: undefined,
        when: null
      })
    ).toEqual({
      amount: 1500,
      items: "3 items",
      "metadata.deep.deeper": "{…}",
      "metadata.order": "A-1",
      note: `${"x".repeat(AuditEvent.MaxSummaryText)}…`,
      one: "1 item",
      ratio: "1.5",
      reason: "customer asked",
      when: null
    })
  })

  it("never keeps a secret, a password, a code or a token, and says which it left out", () => {
    expect(
      AuditEvent.summarize({
        secret: "whsec_abc",
        password: "correct horse battery",
        code: "123456",
        recovery_codes: ["a", "b"],
        access_token: "t",
        client_secret: "s",
        name: "Cafe"
      })
    ).toEqual({
      name: "Cafe",
      [AuditEvent.OmittedKey]: "access_token, client_secret, code, password, recovery_codes, secret"
    })
  })

  it("leaves out exactly the secret-named fields, in any case, and keeps look-alikes", () => {
    const secret = [
      "client_secret",
      "webhook_secret",
      "password",
      "new_password",
      "PASSWORD",
      "passcode",
      "access_token",
      "refresh_token",
      "otp",
      "pin",
      "card_pin",
      "code",
      "verification_code",
      "recovery_codes",
      "signature",
      "Authorization"
    ]
    const kept = {
      shipping_address: "Male",
      pinned: true,
      opinion: "good",
      postcode: "20026",
      code_challenge_method: "S256",
      qr_code_id: "q-1",
      description: "Coffee"
    }
    expect(
      AuditEvent.summarize({ ...Object.fromEntries(secret.map((k) => [k, "v"])), ...kept })
    ).toStrictEqual({
      ...kept,
      [AuditEvent.OmittedKey]: [...secret].sort().join(", ")
    })
    // Under a dotted name too, and a secret-named object goes whole.
    expect(AuditEvent.summarize({ payout: { pin: "1234", bank: "BML" }, tokens: { a: "t" } })).toStrictEqual({
      "payout.bank": "BML",
      [AuditEvent.OmittedKey]: "payout.pin, tokens"
    })
    // A secret field not given is not said to be left out.
    expect(AuditEvent.summarize({ token: undefined, name: "Cafe" })).toStrictEqual({ name: "Cafe" })
  })

  it("keeps booleans, texts up to the limit whole, and leaves out what has no flat form", () => {
    const exact = "y".repeat(AuditEvent.MaxSummaryText)
    const over = "z".repeat(AuditEvent.MaxSummaryText + 1)
    expect(
      AuditEvent.summarize({
        livemode: true,
        off: false,
        exact,
        over,
        big: 10n,
        run: () => 1,
        tag: Symbol("s")
      })
    ).toStrictEqual({ livemode: true, off: false, exact, over: `${over.slice(0, -1)}…` })
  })

  it("masks account-named texts by name, in any case, and keeps their other values as they are", () => {
    const names = ["phone", "payer_phone", "Phone", "wallet_id", "account_number", "msisdn", "iban", "IBAN"]
    expect(AuditEvent.summarize(Object.fromEntries(names.map((k) => [k, "MV0012345678"])))).toStrictEqual(
      Object.fromEntries(names.map((k) => [k, "••••••••5678"]))
    )
    expect(
      AuditEvent.summarize({ phone: null, wallet_count: 2, account_verified: true, name: "5678" })
    ).toStrictEqual({ phone: null, wallet_count: 2, account_verified: true, name: "5678" })
  })

  it("masks all of a short account number and at most eight characters of a long one", () => {
    expect(AuditEvent.maskAccount("")).toBe("")
    expect(AuditEvent.maskAccount("123")).toBe("•••")
    expect(AuditEvent.maskAccount("1234")).toBe("••••")
    expect(AuditEvent.maskAccount("12345")).toBe("•2345")
    expect(AuditEvent.maskAccount("123456789012")).toBe("••••••••9012")
    expect(AuditEvent.maskAccount("12345678901234567890")).toBe("••••••••7890")
  })

  it("shows an account number by its last four characters only", () => {
    expect(
      AuditEvent.summarize({ phone: "+9607771234", wallet_id: "w-1", payout: { account: "7730000123456" } })
    ).toEqual({
      "payout.account": "••••••••3456",
      phone: "•••••••1234",
      wallet_id: "•••"
    })
  })

  it("whatever it is given, the summary decodes, holds no secret's value and no account number whole", () => {
    const secretValue = "S3CRET-VALUE-XYZ"
    const account = "+9607654321"
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
        fc.constantFrom("secret", "password", "webhook_secret", "otp", "token", "pin"),
        fc.constantFrom("phone", "wallet", "account_number", "payer_phone"),
        (fields, secretKey, accountKey) => {
          const summary = AuditEvent.summarize({ ...fields, [secretKey]: secretValue, [accountKey]: account })
          expect(decodes(summary)).toBe(true)
          const text = JSON.stringify(summary)
          expect(text).not.toContain(secretValue)
          expect(text).not.toContain(account)
          expect(summary[AuditEvent.OmittedKey]).toContain(secretKey)
          expect(summary[accountKey]).toBe("•••••••4321")
        }
      )
    )
  })
})
