/**
 * `laari trigger <event-type>`: sandbox activity that emits that event, through the merchant API and the
 * sandbox's test helpers, as a merchant's own integration would cause it. Test keys only.
 */
import { Args, Command, Options } from "@effect/cli"
import * as EventType from "@laari/core/kernel/EventType"
import { Console, Effect } from "effect"
import * as Remote from "./Remote.js"

type Client = Effect.Effect.Success<ReturnType<typeof Remote.keyClient>>["client"]

const unique = () => `cli-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`

const mandate = (client: Client, perChargeCap = 100_000) =>
  client.mandates.create({
    headers: {},
    payload: { reference: unique(), title: "laari trigger", per_charge_cap: perChargeCap, period: "MONTH" }
  })

const subscription = (client: Client) =>
  Effect.gen(function* () {
    const session = yield* client.checkout.create({
      headers: {},
      payload: {
        mode: "SUBSCRIPTION",
        reference: unique(),
        title: "laari trigger",
        price_data: { name: "Trigger plan", amount: 1_000, interval: "MONTH" }
      }
    })
    return yield* client.testHelpers.payCheckoutSession({ headers: {}, path: { id: session.id } })
  })

/** What each event needs; `undefined`: the sandbox cannot cause it on demand (the reason is given). */
const recipes = (
  outlet: number
): Record<EventType.Type, ((client: Client) => Effect.Effect<unknown, unknown>) | string> => ({
  "mandate.activated": (client) => mandate(client),
  "mandate.charge.succeeded": (client) =>
    Effect.flatMap(mandate(client), (m) =>
      client.mandates.charge({ headers: {}, path: { id: m.id }, payload: { amount: 1_000 } })
    ),
  "mandate.charge.failed": (client) =>
    Effect.gen(function* () {
      // The sandbox payer's wallet cannot cover the charge for a moment: the wallet declines it.
      const m = yield* mandate(client)
      const before = yield* client.testHelpers.payer()
      yield* client.testHelpers.setPayer({ payload: { balance: 0 } })
      yield* client.mandates
        .charge({ headers: {}, path: { id: m.id }, payload: { amount: 1_000 } })
        .pipe(
          Effect.ignore,
          Effect.ensuring(
            Effect.ignore(client.testHelpers.setPayer({ payload: { balance: before.balance } }))
          )
        )
    }),
  "mandate.revoked": (client) =>
    Effect.flatMap(mandate(client), (m) => client.mandates.revoke({ headers: {}, path: { id: m.id } })),
  // A charge, then half of it back (the whole would be short by the fee, which laari keeps).
  "refund.created": (client) =>
    Effect.gen(function* () {
      const m = yield* mandate(client)
      const charge = yield* client.mandates.charge({
        headers: {},
        path: { id: m.id },
        payload: { amount: 1_000 }
      })
      return yield* client.refunds.create({ headers: {}, payload: { charge_id: charge.id, amount: 500 } })
    }),
  "mandate.declined":
    "sandbox mandates approve themselves: decline a live mandate on its approval page instead.",
  "qr_code.payment.succeeded": (client) =>
    Effect.gen(function* () {
      const qr = yield* client.qrCodes
        .create({
          headers: {},
          payload: { outlet_id: outlet, type: "DYNAMIC", amount: 1_000, reference: unique() }
        })
        .pipe(
          Effect.catchIf(
            (e: unknown) => e instanceof Remote.Problem && e.status === 404,
            () =>
              Effect.fail(
                new Remote.Refusal(
                  `The merchant has no outlet ${outlet}: pass --outlet <id> (laari merchants list shows outlets).`
                )
              )
          )
        )
      return yield* client.testHelpers.payQrCode({ headers: {}, payload: { payload: qr.payload } })
    }),
  "checkout.session.completed": (client) =>
    Effect.gen(function* () {
      const session = yield* client.checkout.create({
        headers: {},
        payload: { reference: unique(), title: "laari trigger", amount: 1_000 }
      })
      return yield* client.testHelpers.payCheckoutSession({ headers: {}, path: { id: session.id } })
    }),
  "subscription.activated": subscription,
  "invoice.paid": subscription,
  "subscription.canceled": (client) =>
    Effect.gen(function* () {
      const paid = yield* subscription(client)
      if (paid.subscription === null)
        return yield* Effect.fail(new Remote.Refusal("The subscription did not start."))
      return yield* client.subscriptions.cancel({ headers: {}, path: { id: paid.subscription.id } })
    }),
  "invoice.payment_failed":
    "it needs a renewal to fail: run the service with LAARI_CLOCK=manual, trigger subscription.activated, set the sandbox payer's balance to 0 (POST /test-helpers/payer), then laari clock advance --by 31d.",
  "subscription.past_due":
    "it needs a renewal to fail: run the service with LAARI_CLOCK=manual, trigger subscription.activated, set the sandbox payer's balance to 0 (POST /test-helpers/payer), then laari clock advance --by 31d."
})

export const trigger = Command.make(
  "trigger",
  {
    url: Remote.url,
    key: Remote.apiKey,
    outlet: Options.integer("outlet").pipe(
      Options.withDescription("The outlet a QR code belongs to (default 1)"),
      Options.withDefault(1)
    ),
    type: Args.choice(
      EventType.Types.map((t) => [t, t] as const),
      { name: "event-type" }
    ).pipe(Args.withDescription(`One of: ${EventType.Types.join(", ")}`))
  },
  (o) =>
    Effect.gen(function* () {
      const { client, key } = yield* Remote.keyClient(o.url, o.key)
      if (!key.startsWith("sk_test_"))
        return yield* Effect.fail(
          new Remote.Refusal("trigger creates sandbox activity: use a test secret key (sk_test_...).")
        )
      const recipe = recipes(o.outlet)[o.type]
      if (typeof recipe === "string")
        return yield* Effect.fail(new Remote.Refusal(`${o.type} cannot be triggered on demand: ${recipe}`))
      const before = yield* client.events.list({ urlParams: { limit: 1 } })
      yield* recipe(client)
      const after = yield* client.events.list({ urlParams: { limit: 100 } })
      const latest = before[0]?.id
      const cut = after.findIndex((e) => e.id === latest)
      const emitted = (cut === -1 ? after : after.slice(0, cut)).slice().reverse()
      for (const e of emitted) yield* Console.log(`${e.id}  ${e.type}`)
      if (!emitted.some((e) => e.type === o.type))
        return yield* Effect.fail(
          new Remote.Refusal(`The activity ran, but no ${o.type} event was recorded.`)
        )
    }).pipe(Remote.report(o.url))
).pipe(
  Command.withDescription(
    "Create sandbox activity that emits <event-type>, and print the events it recorded (follow them with laari listen)"
  )
)
