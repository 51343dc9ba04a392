/**
 * The background work of the core services, each job made from the service it runs on. A host lists
 * these (`engine`) with its own in one list and provides `Work.Jobs` from it once (`Work.layer`): the
 * server's `Background/Jobs`; a host that runs only these, `layer` (the testkit). A job of core is added
 * to `engine`, and every host runs it.
 */
import { Effect } from "effect"
import { Approvals } from "./approvals/Approvals.js"
import { Billing } from "./billing/Billing.js"
import { Checkout } from "./billing/Checkout.js"
import { Mandates } from "./mandates/Mandates.js"
import * as Work from "./kernel/Work.js"
import { Resolver } from "./Resolver.js"

export const mandateExpiry = Effect.map(Mandates, (mandates) => mandates.expiryJob)
export const checkoutExpiry = Effect.map(Checkout, (checkout) => checkout.expiryJob)
export const renewals = Effect.map(Billing, (billing) => billing.renewalJob)
export const codeRedaction = Effect.map(Approvals, (approvals) => approvals.redactionJob)
export const walletResolver = Effect.map(Resolver, (resolver) => resolver.job)

/** Every job of the engine, in the order they run. */
export const engine = [mandateExpiry, checkoutExpiry, renewals, codeRedaction, walletResolver] as const

/** `Work.Jobs` of a host whose only background work is the engine's. */
export const layer = Work.layer(engine)
