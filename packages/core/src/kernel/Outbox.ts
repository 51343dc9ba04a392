/**
 * The outbox port and the event as it is stored and delivered: services emit drafts in their own transaction,
 * the outbox numbers them per subject. Generic over the webhook object, so features depend on it and it on none
 * of them; the catalogue of exact objects is `Events` at the package root.
 */
import { Context, type DateTime, Effect } from "effect"
import * as Calendar from "./Calendar.js"
import { Crypto } from "./Crypto.js"
import type { ServiceUnavailable } from "./Errors.js"
import { ApiVersion, type Type } from "./EventType.js"
import type { Environment, MerchantId } from "./Ids.js"

/** An event as the outbox keeps it: the envelope and whom it belongs to. */
export interface Event {
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly createdAt: DateTime.Utc
  /** The object whose events `sequence` counts (`subjectOf`). */
  readonly subject: string
  readonly envelope: Envelope
}

/**
 * The webhook objects, by name: each feature adds its own here (declaration merging, as in
 * `mandates/MandateEvents.ts`), so the outbox knows every exact object without importing a feature.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each feature's declaration merging
export interface EventObjects {}

/** Any webhook object of the catalogue: the union of what the features declared in `EventObjects`. */
export type EventObject = EventObjects[keyof EventObjects]

/** The delivered envelope of any event, as the outbox writes it (`Events.Envelope` is its schema). */
export interface Envelope {
  readonly id: string
  readonly type: Type
  readonly api_version: typeof ApiVersion
  readonly created: number
  readonly livemode: boolean
  readonly sequence: number
  readonly data: { readonly object: EventObject }
}

/** An event as a service emits it: everything but its `sequence`, which the outbox assigns. */
export interface Draft extends Omit<Event, "envelope"> {
  readonly id: string
  readonly type: Type
  readonly object: EventObject
}

/**
 * The object an event is about, for `sequence`: the mandate of mandate and charge events, the
 * subscription of subscription, invoice and subscription checkout events, else the object itself.
 */
export const subjectOf = (object: EventObject): string => {
  switch (object.object) {
    case "mandate_charge":
    case "mandate_charge_failure":
      return object.mandate_id
    case "invoice":
      return object.subscription_id
    case "checkout.session":
      return object.subscription?.id ?? object.id
    case "qr_code_payment":
      return object.qr_code_id
    default:
      return object.id
  }
}

export const make = (input: {
  id: string
  type: Type
  merchantId: MerchantId
  environment: Environment
  now: DateTime.Utc
  object: EventObject
}): Draft => ({
  id: input.id,
  type: input.type,
  merchantId: input.merchantId,
  environment: input.environment,
  createdAt: input.now,
  subject: subjectOf(input.object),
  object: input.object
})

/** The stored and delivered event: the draft with the `sequence` the outbox gave it. */
export const seal = (draft: Draft, sequence: number): Event => ({
  merchantId: draft.merchantId,
  environment: draft.environment,
  createdAt: draft.createdAt,
  subject: draft.subject,
  envelope: {
    id: draft.id,
    type: draft.type,
    api_version: ApiVersion,
    created: Calendar.unixSeconds(draft.createdAt),
    livemode: draft.environment === "live",
    sequence,
    data: { object: draft.object }
  }
})

export interface OutboxService {
  /**
   * Records an event in the caller's transaction, numbered one past the last event about its subject;
   * delivery happens later, from the outbox.
   */
  readonly append: (event: Draft) => Effect.Effect<void, ServiceUnavailable>
}

export class Outbox extends Context.Tag("laari/Outbox")<Outbox, OutboxService>() {}

/** Records an event of `type` about `object`, owned by `owner`, at `now`: what `emitter` gives a service. */
export type Emit = (
  type: Type,
  owner: { readonly merchantId: MerchantId; readonly environment: Environment },
  object: EventObject,
  now: DateTime.Utc
) => Effect.Effect<void, ServiceUnavailable>

/**
 * The one way services record an event: a fresh `evt_` id, the envelope, appended in the caller's
 * transaction. A service yields it once, beside its other ports.
 */
export const emitter: Effect.Effect<Emit, never, Outbox | Crypto> = Effect.gen(function* () {
  const outbox = yield* Outbox
  const crypto = yield* Crypto
  return (type, owner, object, now) =>
    Effect.flatMap(crypto.uuid, (id) =>
      outbox.append(
        make({
          id: `evt_${id.replaceAll("-", "")}`,
          type,
          merchantId: owner.merchantId,
          environment: owner.environment,
          now,
          object
        })
      )
    )
})
