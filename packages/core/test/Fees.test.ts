import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Fees from "../src/kernel/Fees.js"

/** Half up, exactly, by integer quotient and remainder. */
const halfUp = (amount: number, bps: number): number => {
  const product = BigInt(amount) * BigInt(bps)
  const quotient = product / 10_000n
  const remainder = product % 10_000n
  return Number(quotient + (remainder * 2n >= 10_000n ? 1n : 0n))
}

describe("Fees.split", () => {
  it.each([
    [150, 100, 2, 148], // 1.5 rounds up
    [149, 100, 1, 148], // 1.49 rounds down
    [250, 100, 3, 247], // 2.5 rounds up
    [12_350, 100, 124, 12_226], // 123.5
    [12_349, 100, 123, 12_226], // 123.49
    [100, 0, 0, 100],
    [1_010, 250, 25, 985], // 25.25
    [1_030, 250, 26, 1_004], // 25.75
    [1_020, 250, 26, 994], // 25.5
    [500_000, 10_000, 500_000, 0]
  ])("%d laari at %d bps: fee %d, net %d", (amount, bps, fee, netAmount) => {
    expect(Fees.split(amount, bps)).toEqual({ fee, netAmount })
  })

  it("the default is 1.00%", () => {
    expect(Fees.DefaultFeeBps).toBe(100)
  })

  it("fee + net = amount, the fee is rounded half up, and neither is negative", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (amount, bps) => {
          const { fee, netAmount } = Fees.split(amount, bps)
          expect(fee + netAmount).toBe(amount)
          expect(fee).toBe(halfUp(amount, bps))
          expect(fee).toBeGreaterThanOrEqual(0)
          expect(netAmount).toBeGreaterThanOrEqual(0)
        }
      )
    )
  })
})
