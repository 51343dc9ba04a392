/**
 * The outbox writes an event in one statement, splicing the subject's next number into the envelope's
 * text in SQL: the text either side of it must be exactly the sealed envelope's, whatever the object
 * holds (even text that looks like the sequence field).
 */
import { describe, expect, it } from "@effect/vitest"
import { Events, type Ids } from "@laari/core"
import { DateTime } from "effect"
import * as fc from "fast-check"
import { envelopeAround } from "../../src/Sql/Events.js"

const tricky = fc.oneof(
  fc.string(),
  fc.constantFrom(',"sequence":0,', '"sequence":0,"data":', '{"sequence":0,"data":{}}', "\u2028")
)

const draft = (description: string, environment: Ids.Environment, type: Events.Type) =>
  Events.make({
    id: "0d4c8b4e-5d59-4d8e-9a53-0b1f0c35c2a1",
    type,
    merchantId: "8f5b6c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b" as Ids.MerchantId,
    environment,
    now: DateTime.unsafeMake(1_700_000_000_000),
    object: {
      object: "mandate_charge",
      id: "charge-1",
      mandate_id: "mandate-1",
      amount: 100,
      description,
      reference: description
    } as unknown as Events.WebhookObject
  })

describe("envelopeAround", () => {
  it("before + n + after is the sealed envelope's text, for any object and number", () =>
    fc.assert(
      fc.property(
        tricky,
        fc.constantFrom<Ids.Environment>("test", "live"),
        fc.constantFrom<Events.Type>("mandate.charge.succeeded", "mandate.charge.failed"),
        fc.nat(),
        (description, environment, type, n) => {
          const d = draft(description, environment, type)
          const [before, after] = envelopeAround(d)
          expect(before + String(n) + after).toBe(JSON.stringify(Events.seal(d, n).envelope))
          // and not for another number
          expect(before + String(n + 1) + after).not.toBe(JSON.stringify(Events.seal(d, n).envelope))
        }
      )
    ))
})
