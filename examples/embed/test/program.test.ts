import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { runInMemory } from "../src/program.js"

describe("examples/embed", () => {
  it("creates, approves and charges a mandate through the library", async () => {
    const result = await Effect.runPromise(runInMemory)
    expect(result.created).toBe("INITIATED")
    expect(result.approved).toBe("ACTIVE")
    expect(result.charge).toMatchObject({
      amount: 12_550,
      fee: 126,
      netAmount: 12_424,
      periodCharged: 12_550
    })
    expect(result.refused).toBe("PER_CHARGE_CAP_EXCEEDED")
  })
})
