/**
 * Minting a dynamic QR code through the library: a merchant's outlet, a code for MVR 125.50 that lives
 * ten minutes, and its payload, which any QR library can render.
 */
import { Ids, QrCodes } from "@laari/core"
import { Seed, Testkit } from "@laari/testkit"
import { Effect } from "effect"

export const program = Effect.gen(function* () {
  const seed = yield* Seed.Seed
  const qrCodes = yield* QrCodes.QrCodes
  const merchant = yield* seed.merchant({ name: "Dhon Manik Cafe", city: "Male", mcc: "5814" })
  const outlet = yield* seed.outlet(merchant.id, "Majeedhee Magu")
  const tenant: Ids.Tenant = { merchantId: merchant.id, environment: "test" }
  return yield* qrCodes.create(tenant, {
    outletId: outlet.id,
    type: "DYNAMIC",
    amount: 12_550,
    expiresInMinutes: 10,
    title: "Table 4",
    description: null,
    reference: null
  })
})

/** The program on the in-memory adapters. */
export const runInMemory = program.pipe(Effect.provide(Testkit.layer()))
