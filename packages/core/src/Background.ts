/**
 * The background work of the core services, in one list: the server's workers poll it, and the manual
 * and controllable clocks run it to quiescence.
 */
import { Effect, Layer } from "effect"
import { Approvals } from "./approvals/Approvals.js"
import { Billing } from "./billing/Billing.js"
import { Checkout } from "./billing/Checkout.js"
import { Mandates } from "./mandates/Mandates.js"
import * as Work from "./kernel/Work.js"
import { Resolver } from "./Resolver.js"

export const jobs: Layer.Layer<Work.Jobs, never, Mandates | Checkout | Billing | Approvals | Resolver> =
  Layer.effect(
    Work.Jobs,
    Effect.gen(function* () {
      const approvals = yield* Approvals
      const mandates = yield* Mandates
      const checkout = yield* Checkout
      const billing = yield* Billing
      const resolver = yield* Resolver
      return [
        mandates.expiryJob,
        checkout.expiryJob,
        billing.renewalJob,
        approvals.redactionJob,
        resolver.job
      ] satisfies ReadonlyArray<Work.Job>
    })
  )
