import { describe, expect, it } from "@effect/vitest"
import { Wallet } from "@laari/core"
import fc from "fast-check"

const whole = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })
/** A payment's figures: amount above 0, fee from 0 to the amount, both whole laari. */
const payment = whole.chain((amount) => fc.tuple(fc.constant(amount), fc.integer({ min: 0, max: amount })))
/** Not a whole number of laari: fractional, unsafe, or no number at all. */
const notWhole = fc.oneof(
  fc.double({ min: -1e6, max: 1e6, noInteger: true }),
  fc.constantFrom(Number.MAX_SAFE_INTEGER + 1, Number.NaN, Number.POSITIVE_INFINITY)
)
/** Figures that are no payment, each broken in one way. */
const broken = fc.oneof(
  payment.map(([amount, fee]) => [-amount, fee] as const),
  fc.constant([0, 0] as const),
  payment.map(([amount, fee]) => [amount, -fee - 1] as const),
  payment.map(([amount, fee]) => [amount, amount + fee + 1] as const),
  fc.tuple(notWhole, fc.constant(0)),
  fc.tuple(whole, notWhole)
)

describe("transferDefect", () => {
  it("a payment's figures pass: amount above 0, fee from 0 to the amount, both whole", () => {
    fc.assert(
      fc.property(payment, ([amount, fee]) => {
        expect(Wallet.transferDefect({ id: "t", amount, fee } as Wallet.Transfer)).toBeUndefined()
      })
    )
  })

  it("any other figures are named, whichever is wrong", () => {
    fc.assert(
      fc.property(broken, ([amount, fee]) => {
        expect(Wallet.transferDefect({ id: "t", amount, fee } as Wallet.Transfer)).toBe(
          `transfer t: amount ${amount} and fee ${fee} do not make sense`
        )
      })
    )
  })
})

describe("reversalDefect", () => {
  it("a whole amount above 0 passes; anything else is named", () => {
    fc.assert(
      fc.property(whole, (amount) => {
        expect(Wallet.reversalDefect({ id: "r", amount } as Wallet.Reversal)).toBeUndefined()
      })
    )
    for (const amount of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN])
      expect(Wallet.reversalDefect({ id: "r", amount } as Wallet.Reversal)).toBe(
        `reversal r: amount ${amount} does not make sense`
      )
  })
})

describe("decideTransfer", () => {
  const account = fc.record({
    customerId: fc.constant("c" as Wallet.PayerAccount["customerId"]),
    environment: fc.constant("test" as const),
    balance: fc.integer({ min: 0, max: 1_000_000 }),
    limit: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: null }),
    frozen: fc.boolean(),
    blockedByRules: fc.boolean(),
    timeZone: fc.constant("Indian/Maldives")
  }) as fc.Arbitrary<Wallet.PayerAccount>

  it("refuses in order: frozen, blocked by rules, over the limit, too little; else lets it through", () => {
    fc.assert(
      fc.property(account, fc.integer({ min: 1, max: 1_000_000 }), (a, amount) => {
        const expected = a.frozen
          ? "wallet-frozen"
          : a.blockedByRules
            ? "blocked-by-rules"
            : a.limit !== null && amount > a.limit
              ? "wallet-limit"
              : a.balance < amount
                ? "insufficient-balance"
                : undefined
        expect(Wallet.decideTransfer(a, amount)).toBe(expected)
      })
    )
  })

  it("examples at each boundary", () => {
    const a = { balance: 100, limit: 50, frozen: false, blockedByRules: false } as Wallet.PayerAccount
    expect(Wallet.decideTransfer(a, 50)).toBeUndefined()
    expect(Wallet.decideTransfer(a, 51)).toBe("wallet-limit")
    expect(Wallet.decideTransfer({ ...a, limit: null }, 100)).toBeUndefined()
    expect(Wallet.decideTransfer({ ...a, limit: null }, 101)).toBe("insufficient-balance")
    expect(Wallet.decideTransfer({ ...a, blockedByRules: true }, 1)).toBe("blocked-by-rules")
    expect(Wallet.decideTransfer({ ...a, frozen: true, blockedByRules: true }, 1)).toBe("wallet-frozen")
  })
})
