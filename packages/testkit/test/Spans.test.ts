/**
 * The services' methods are named (`Effect.fn`), and so are their spans: under an installed tracer a
 * command runs in `<Service>.<method>` with its tenant, a method it calls by name nests under it, and
 * the background jobs, which poll, make none.
 */
import { describe, expect, it } from "@effect/vitest"
import { Mandates } from "@laari/core"
import { Effect, Tracer } from "effect"
import { Seed } from "../src/Seed.js"
import * as Testkit from "../src/Testkit.js"

/** A tracer that keeps every span it makes; not Effect's default, so someone listens. */
const recording = Effect.map(Effect.tracer, (native) => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = native.span(...args)
      spans.push(span)
      return span
    },
    context: native.context
  })
  return { tracer, spans }
})

const terms = {
  reference: "spans",
  title: "Spans",
  description: null,
  perChargeCap: 50_000,
  periodCap: null,
  period: null,
  expiresAt: null,
  returnUrl: null
}

describe("the services' spans", () => {
  it.effect("a charge runs in `Mandates.charge` with its tenant; the expiry job makes no span", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const mandates = yield* Mandates.Mandates
      const merchant = yield* seed.merchant({ name: "Span Shop" })
      const tenant = { merchantId: merchant.id, environment: "test" as const }
      const mandate = yield* mandates.create(tenant, terms)
      const { tracer, spans } = yield* recording
      yield* mandates.charge(tenant, mandate.id, { amount: 1_000 }).pipe(Effect.withTracer(tracer))
      expect(spans.map((s) => s.name)).toEqual(["Mandates.charge"])
      expect(spans[0]!.attributes.get("laari.merchant_id")).toBe(merchant.id)
      expect(spans[0]!.attributes.get("laari.environment")).toBe("test")
      expect(spans[0]!.status._tag).toBe("Ended")

      yield* mandates.expiryJob.runDue.pipe(Effect.withTracer(tracer))
      expect(spans).toHaveLength(1)
    }).pipe(Effect.provide(Testkit.layer()))
  )

  it.effect("a method called by name nests its span; one without a tenant has no tenant attributes", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const mandates = yield* Mandates.Mandates
      const merchant = yield* seed.merchant({ name: "Span Shop", features: { mandatesLive: true } })
      const live = { merchantId: merchant.id, environment: "live" as const }
      const customer = yield* seed.customer({ environment: "live", phone: "+9607771234" })
      const mandate = yield* mandates.create(live, terms)
      const { tracer, spans } = yield* recording
      yield* mandates.requestApproval(mandate.id, customer.phone).pipe(Effect.withTracer(tracer))
      const [outer, inner] = spans
      expect([outer?.name, inner?.name]).toEqual(["Mandates.requestApproval", "Approvals.issue"])
      expect(inner?.parent._tag === "Some" && inner.parent.value).toBe(outer)
      expect(outer?.attributes.has("laari.merchant_id")).toBe(false)
    }).pipe(Effect.provide(Testkit.layer()))
  )
})
