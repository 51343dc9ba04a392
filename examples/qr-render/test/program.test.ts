import { Emv, QrScheme } from "@laari/core"
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { runInMemory } from "../src/program.js"

describe("examples/qr-render", () => {
  it("mints a dynamic code whose payload verifies and parses back", async () => {
    const code = await Effect.runPromise(runInMemory)
    expect(code).toMatchObject({ type: "DYNAMIC", status: "ACTIVE", amount: 12_550, title: "Table 4" })
    expect(Emv.verifyCrc(code.payload)).toBe(true)
    const parsed = QrScheme.parse(code.payload)
    expect(Either.isRight(parsed) && parsed.right).toMatchObject({
      type: "DYNAMIC",
      qrid: code.qrid,
      amount: 12_550
    })
  })
})
