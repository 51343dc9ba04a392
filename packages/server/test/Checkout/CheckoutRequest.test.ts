/**
 * The document's body of `POST /checkout/sessions` is the union `CreateSessionByMode`,
 * and the handler creates a session only from a request that union decodes, while the refusals stay
 * `CheckoutSession.validate`'s. So the two must agree: every request `validate` accepts, the union
 * decodes (otherwise the document would refuse what the service takes, and the handler would answer with
 * the union's words), and every request the union refuses, `validate` refuses. The only rules the union
 * cannot say (the interval span, `amount` equal to `price_data.amount`) are `validate`'s alone.
 * (Effect's own fast-check: `Arbitrary.make` builds on it, not on the test suites' newer one.)
 */
import { CheckoutSession } from "@laari/core"
import { Arbitrary, Either, FastCheck as fc, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { CreateSession, CreateSessionByMode, toRequest } from "../../src/Checkout/Api.js"

const byMode = Schema.decodeUnknownEither(CreateSessionByMode)
const encode = Schema.encodeSync(CreateSession)
/** The problems only `validate` can find: they need two fields at once. */
const crossField = (p: { readonly field: string; readonly message: string }) =>
  p.field === "priceData.intervalCount" || (p.field === "amount" && p.message.startsWith("must equal"))

/** Requests the lenient decode takes, biased towards complete ones so that both verdicts are common. */
const requests = fc
  .tuple(
    Arbitrary.make(CreateSession),
    fc.boolean(),
    fc.constantFrom<"PAYMENT" | "SUBSCRIPTION" | null | undefined>("PAYMENT", "SUBSCRIPTION", null, undefined)
  )
  .map(([p, complete, mode]) =>
    complete
      ? {
          ...p,
          mode,
          title: p.title ?? "Order",
          reference: p.reference ?? "order-1",
          ...(mode === "SUBSCRIPTION"
            ? { price_data: { name: "Plan", amount: 1000, interval: "MONTH" as const, ...p.price_data } }
            : { amount: p.amount ?? 1000 })
        }
      : p
  )

describe("the documented body of POST /checkout/sessions and CheckoutSession.validate", () => {
  it("give the same verdict on every request but for the rules across fields", () => {
    let accepted = 0
    let refused = 0
    fc.assert(
      fc.property(requests, (payload) => {
        const verdict = CheckoutSession.validate(toRequest(payload))
        const decoded = byMode(encode(payload))
        if (Either.isRight(verdict)) {
          accepted++
          expect(Either.isRight(decoded), JSON.stringify(payload)).toBe(true)
        } else {
          refused++
          if (Either.isRight(decoded))
            expect(verdict.left.every(crossField), JSON.stringify(verdict.left)).toBe(true)
        }
      }),
      { numRuns: 3000 }
    )
    expect(accepted).toBeGreaterThan(300)
    expect(refused).toBeGreaterThan(300)
  })
})
