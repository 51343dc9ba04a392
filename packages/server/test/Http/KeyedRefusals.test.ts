/**
 * A keyed command that is refused leaves nothing but its stored answer, on PGlite and on PostgreSQL: for
 * every keyed endpoint and each of its refusals, every row of every table after the refused request is
 * the row before it, but for the one idempotency record that keeps the refusal, and a retry with the key
 * replays it. A refused refund once stayed behind as a SUCCEEDED refund (the command's insert committed
 * with the stored answer) and took its reference.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "../../src/Api.js"
import * as Idempotent from "../../src/Http/Idempotent.js"
import * as F from "../support/Fixtures.js"
import { serverBackends } from "../support/PostgresServer.js"
import type * as TestServer from "../support/TestServer.js"

/** A refused keyed request, as a case stages it. */
interface Refused {
  readonly key: string
  readonly path: string
  readonly body?: unknown
  readonly status: number
  readonly code: string
}

/** A keyed endpoint (`group.endpoint`), one of its refusals, and how to stage it on a new merchant. */
interface Case {
  readonly endpoint: string
  readonly refusal: string
  /** What the refusal records by design, with or without a key: rows removed and added, by table. */
  readonly leaves?: Record<string, { readonly gone: number; readonly added: number }>
  readonly stage: (s: Staging) => Promise<Refused>
}

/** What a case stages with: the server, a new merchant, and requests that must succeed. */
interface Staging {
  readonly server: TestServer.TestServer
  readonly m: F.Merchant
  readonly ok: (method: string, path: string, body?: unknown, key?: string) => Promise<any>
}

const mandate = async ({ ok }: Staging, overrides: Record<string, unknown> = {}) =>
  ok("POST", "/mandates", F.mandateBody(overrides))
const charged = async (s: Staging, amount: number, overrides: Record<string, unknown> = {}) => {
  const made = await mandate(s)
  return s.ok("POST", `/mandates/${made.id}/charges`, { amount, ...overrides })
}
const dynamicCode = (s: Staging, amount = 3_000) =>
  s.ok("POST", "/qr-codes", { outlet_id: s.m.outletId, type: "DYNAMIC", amount, reference: F.unique("qr") })
const paymentSession = (s: Staging) =>
  s.ok("POST", "/checkout/sessions", {
    mode: "PAYMENT",
    title: "Fish curry",
    amount: 12_550,
    reference: F.unique("order")
  })
const hook = (s: Staging) =>
  s.ok("POST", "/webhook-endpoints", { url: `http://127.0.0.1:9/${F.unique("hook")}`, enabled_events: ["*"] })
const payer = (s: Staging, body: Record<string, unknown>) => s.ok("POST", "/test-helpers/payer", body)

/** What a refused charge records, by design: its `mandate.charge.failed` event, the next of its mandate's. */
const failure = { event_sequences: { gone: 1, added: 1 }, events: { gone: 0, added: 1 } }

const cases: ReadonlyArray<Case> = [
  {
    endpoint: "mandates.create",
    refusal: "MandatesNotEnabled",
    stage: async ({ m }) => ({
      key: m.live,
      path: "/mandates",
      body: F.mandateBody(),
      status: 403,
      code: "MANDATES_NOT_ENABLED"
    })
  },
  {
    endpoint: "mandates.create",
    refusal: "MandateReferenceTaken",
    stage: async (s) => {
      const made = await mandate(s)
      return {
        key: s.m.test,
        path: "/mandates",
        body: F.mandateBody({ reference: made.reference }),
        status: 409,
        code: "REFERENCE_TAKEN"
      }
    }
  },
  ...[
    {
      refusal: "ChargeRefused.NotFound",
      status: 404,
      code: "MANDATE_NOT_FOUND",
      mandate: async () => randomUUID(),
      amount: 1_000
    },
    {
      refusal: "ChargeRefused.Conflict",
      status: 409,
      code: "MANDATE_INACTIVE",
      leaves: failure,
      mandate: async (s: Staging) => {
        const made = await mandate(s)
        await s.ok("POST", `/mandates/${made.id}/revoke`)
        return made.id as string
      },
      amount: 1_000
    },
    {
      refusal: "ChargeRefused.Unprocessable",
      status: 422,
      code: "PER_CHARGE_CAP_EXCEEDED",
      leaves: failure,
      mandate: async (s: Staging) => (await mandate(s)).id as string,
      amount: 50_001
    },
    {
      refusal: "ChargeRefused.PaymentRequired",
      status: 402,
      code: "INSUFFICIENT_FUNDS",
      // The wallet refused: the customer is told too.
      leaves: { ...failure, notifications: { gone: 0, added: 1 } },
      mandate: async (s: Staging) => {
        const made = await mandate(s)
        await payer(s, { balance: 500 })
        return made.id as string
      },
      amount: 1_000
    }
  ].map(
    (c): Case => ({
      endpoint: "mandates.charge",
      refusal: c.refusal,
      leaves: c.leaves,
      stage: async (s) => ({
        key: s.m.test,
        path: `/mandates/${await c.mandate(s)}/charges`,
        body: { amount: c.amount },
        status: c.status,
        code: c.code
      })
    })
  ),
  {
    endpoint: "mandates.revoke",
    refusal: "MandateNotFound",
    stage: async ({ m }) => ({
      key: m.test,
      path: `/mandates/${randomUUID()}/revoke`,
      status: 404,
      code: "MANDATE_NOT_FOUND"
    })
  },
  {
    endpoint: "mandates.revoke",
    refusal: "MandateNotRevocable",
    stage: async (s) => {
      const made = await mandate(s)
      await s.ok("POST", `/mandates/${made.id}/revoke`)
      return {
        key: s.m.test,
        path: `/mandates/${made.id}/revoke`,
        status: 409,
        code: "MANDATE_NOT_REVOCABLE"
      }
    }
  },
  {
    endpoint: "qrCodes.create",
    refusal: "OutletNotFound",
    stage: async ({ m }) => ({
      key: m.test,
      path: "/qr-codes",
      body: { outlet_id: 999_999, type: "STATIC" },
      status: 404,
      code: "OUTLET_NOT_FOUND"
    })
  },
  {
    endpoint: "qrCodes.create",
    refusal: "QrReferenceTaken",
    stage: async (s) => {
      const code = await dynamicCode(s)
      return {
        key: s.m.test,
        path: "/qr-codes",
        body: { outlet_id: s.m.outletId, type: "STATIC", reference: code.reference },
        status: 409,
        code: "REFERENCE_TAKEN"
      }
    }
  },
  {
    endpoint: "qrCodes.deactivate",
    refusal: "QrCodeNotFound",
    stage: async ({ m }) => ({
      key: m.test,
      path: `/qr-codes/${randomUUID()}/deactivate`,
      status: 404,
      code: "QR_CODE_NOT_FOUND"
    })
  },
  {
    endpoint: "qrCodes.deactivate",
    refusal: "QrCodeAlreadyInactive",
    stage: async (s) => {
      const code = await dynamicCode(s)
      await s.ok("POST", `/qr-codes/${code.id}/deactivate`)
      return {
        key: s.m.test,
        path: `/qr-codes/${code.id}/deactivate`,
        status: 400,
        code: "QR_CODE_ALREADY_INACTIVE"
      }
    }
  },
  {
    endpoint: "webhookEndpoints.create",
    refusal: "WebhookEndpointLimitReached",
    stage: async (s) => {
      for (let i = 0; i < 16; i++) await hook(s)
      return {
        key: s.m.test,
        path: "/webhook-endpoints",
        body: { url: "http://127.0.0.1:9/one-too-many", enabled_events: ["*"] },
        status: 409,
        code: "WEBHOOK_ENDPOINT_LIMIT_REACHED"
      }
    }
  },
  ...(["update", "rotateSecret", "resend"] as const).map(
    (name): Case => ({
      endpoint: `webhookEndpoints.${name}`,
      refusal: "WebhookEndpointNotFound",
      stage: async ({ m }) => ({
        key: m.test,
        path: `/webhook-endpoints/${randomUUID()}${{ update: "", rotateSecret: "/rotate-secret", resend: "/resend" }[name]}`,
        body:
          name === "update"
            ? { status: "DISABLED" }
            : name === "resend"
              ? { event_id: randomUUID() }
              : undefined,
        status: 404,
        code: "WEBHOOK_ENDPOINT_NOT_FOUND"
      })
    })
  ),
  {
    endpoint: "webhookEndpoints.resend",
    refusal: "EventNotFound",
    stage: async (s) => {
      const made = await hook(s)
      return {
        key: s.m.test,
        path: `/webhook-endpoints/${made.id}/resend`,
        body: { event_id: randomUUID() },
        status: 404,
        code: "EVENT_NOT_FOUND"
      }
    }
  },
  {
    endpoint: "checkout.create",
    refusal: "SubscriptionsNotEnabled",
    stage: async ({ m }) => ({
      key: m.live,
      path: "/checkout/sessions",
      body: {
        mode: "SUBSCRIPTION",
        title: "Gym",
        reference: F.unique("gym"),
        price_data: { name: "Gold gym", amount: 25_000, interval: "MONTH" }
      },
      status: 403,
      code: "SUBSCRIPTIONS_NOT_ENABLED"
    })
  },
  {
    endpoint: "checkout.create",
    refusal: "CheckoutReferenceTaken",
    stage: async (s) => {
      const session = await paymentSession(s)
      return {
        key: s.m.test,
        path: "/checkout/sessions",
        body: { mode: "PAYMENT", title: "Fish curry", amount: 100, reference: session.reference },
        status: 409,
        code: "REFERENCE_TAKEN"
      }
    }
  },
  {
    endpoint: "checkout.cancel",
    refusal: "CheckoutSessionNotFound",
    stage: async ({ m }) => ({
      key: m.test,
      path: `/checkout/sessions/${randomUUID()}/cancel`,
      status: 404,
      code: "CHECKOUT_SESSION_NOT_FOUND"
    })
  },
  {
    endpoint: "checkout.cancel",
    refusal: "CheckoutSessionClosed",
    stage: async (s) => {
      const session = await paymentSession(s)
      await s.ok("POST", `/checkout/sessions/${session.id}/cancel`)
      return {
        key: s.m.test,
        path: `/checkout/sessions/${session.id}/cancel`,
        status: 409,
        code: "CANCELLED"
      }
    }
  },
  {
    endpoint: "subscriptions.cancel",
    refusal: "SubscriptionNotFound",
    stage: async ({ m }) => ({
      key: m.test,
      path: `/subscriptions/${randomUUID()}/cancel`,
      status: 404,
      code: "SUBSCRIPTION_NOT_FOUND"
    })
  },
  {
    endpoint: "subscriptions.cancel",
    refusal: "SubscriptionNotCancellable",
    stage: async (s) => {
      const [id] = await F.paidSubscriptions(s.server, s.m.test, 1)
      await s.ok("POST", `/subscriptions/${id}/cancel`)
      return {
        key: s.m.test,
        path: `/subscriptions/${id}/cancel`,
        status: 409,
        code: "SUBSCRIPTION_NOT_CANCELLABLE"
      }
    }
  },
  ...[
    {
      refusal: "PaymentNotFound",
      status: 404,
      code: "CHARGE_NOT_FOUND",
      body: async () => ({ charge_id: randomUUID() })
    },
    {
      refusal: "PaymentReferenceAmbiguous",
      status: 409,
      code: "PAYMENT_REFERENCE_AMBIGUOUS",
      body: async (s: Staging) => {
        const made = await mandate(s)
        for (let i = 0; i < 2; i++) await s.ok("POST", `/mandates/${made.id}/charges`, { amount: 2_000 })
        return { charge_reference: made.reference, amount: 100 }
      }
    },
    {
      refusal: "RefundReferenceTaken",
      status: 409,
      code: "REFERENCE_TAKEN",
      body: async (s: Staging) => {
        const charge = await charged(s, 10_000)
        await s.ok("POST", "/refunds", { charge_id: charge.id, amount: 100, reference: "taken" })
        return { charge_id: charge.id, amount: 100, reference: "taken" }
      }
    },
    {
      refusal: "RefundRefused.Conflict",
      status: 409,
      code: "PAYMENT_ALREADY_REFUNDED",
      body: async (s: Staging) => {
        // A second charge funds the merchant for the first one's full refund.
        const charge = await charged(s, 10_000)
        await charged(s, 10_000)
        await s.ok("POST", "/refunds", { charge_id: charge.id })
        return { charge_id: charge.id, amount: 1 }
      }
    },
    {
      refusal: "RefundRefused.Unprocessable",
      status: 422,
      code: "REFUND_EXCEEDS_PAYMENT",
      body: async (s: Staging) => ({ charge_id: (await charged(s, 5_000)).id, amount: 5_001 })
    },
    {
      // The merchant holds 4,950 of the 5,000 (the fee is laari's): a full refund is short.
      refusal: "RefundRefused.PaymentRequired",
      status: 402,
      code: "INSUFFICIENT_MERCHANT_BALANCE",
      body: async (s: Staging) => ({ charge_id: (await charged(s, 5_000)).id, reference: "short" })
    }
  ].map(
    (c): Case => ({
      endpoint: "refunds.create",
      refusal: c.refusal,
      stage: async (s) => ({
        key: s.m.test,
        path: "/refunds",
        body: await c.body(s),
        status: c.status,
        code: c.code
      })
    })
  ),
  ...[
    {
      refusal: "QrPayloadInvalid",
      status: 422,
      code: "QR_PAYLOAD_INVALID",
      body: async () => ({ payload: "not a QR payload" })
    },
    {
      refusal: "QrPaymentRefused.Conflict",
      status: 409,
      code: "ALREADY_PAID",
      body: async (s: Staging) => {
        const code = await dynamicCode(s)
        await s.ok("POST", "/test-helpers/qr-codes/pay", { payload: code.payload })
        return { payload: code.payload }
      }
    },
    {
      refusal: "QrPaymentRefused.Unprocessable",
      status: 422,
      code: "AMOUNT_MISMATCH",
      body: async (s: Staging) => ({ payload: (await dynamicCode(s, 3_000)).payload, amount: 5_000 })
    },
    {
      refusal: "QrPaymentDeclined.PaymentRequired",
      status: 402,
      code: "INSUFFICIENT_BALANCE",
      body: async (s: Staging) => {
        await payer(s, { balance: 100 })
        return { payload: (await dynamicCode(s)).payload }
      }
    },
    {
      refusal: "QrPaymentDeclined.Unprocessable",
      status: 422,
      code: "WALLET_FROZEN",
      body: async (s: Staging) => {
        await payer(s, { frozen: true })
        return { payload: (await dynamicCode(s)).payload }
      }
    }
  ].map(
    (c): Case => ({
      endpoint: "testHelpers.payQrCode",
      refusal: c.refusal,
      stage: async (s) => ({
        key: s.m.test,
        path: "/test-helpers/qr-codes/pay",
        body: await c.body(s),
        status: c.status,
        code: c.code
      })
    })
  ),
  ...[
    {
      refusal: "CheckoutSessionNotFound",
      status: 404,
      code: "CHECKOUT_SESSION_NOT_FOUND",
      session: async () => randomUUID()
    },
    {
      refusal: "CheckoutSessionClosed",
      status: 409,
      code: "CANCELLED",
      session: async (s: Staging) => {
        const session = await paymentSession(s)
        await s.ok("POST", `/checkout/sessions/${session.id}/cancel`)
        return session.id as string
      }
    },
    {
      refusal: "CheckoutPaymentDeclined.PaymentRequired",
      status: 402,
      code: "INSUFFICIENT_BALANCE",
      session: async (s: Staging) => {
        await payer(s, { balance: 100 })
        return (await paymentSession(s)).id as string
      }
    },
    {
      refusal: "CheckoutPaymentDeclined.Unprocessable",
      status: 422,
      code: "WALLET_FROZEN",
      session: async (s: Staging) => {
        await payer(s, { frozen: true })
        return (await paymentSession(s)).id as string
      }
    }
  ].map(
    (c): Case => ({
      endpoint: "testHelpers.payCheckoutSession",
      refusal: c.refusal,
      stage: async (s) => ({
        key: s.m.test,
        path: `/test-helpers/checkout/sessions/${await c.session(s)}/pay`,
        status: c.status,
        code: c.code
      })
    })
  )
]

/** Every row of every table of the database, as JSON text, by table. */
const rows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ name: string }>`
    SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name
    FROM information_schema.tables
    WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
    ORDER BY 1`
  const union = tables
    .map((t) => `SELECT '${t.name}' AS t, row_to_json(x)::text AS r FROM ${t.name} x`)
    .join(" UNION ALL ")
  const all = yield* sql.unsafe<{ t: string; r: string }>(union)
  const by = new Map<string, Array<string>>(tables.map((t) => [t.name, []]))
  for (const { t, r } of all) by.get(t)!.push(r)
  for (const list of by.values()) list.sort()
  return by
})

type Rows = Map<string, Array<string>>

const same = (a: Rows, b: Rows) => JSON.stringify([...a]) === JSON.stringify([...b])

/** What changed from `before` to `after`: each table's rows gone and rows new. */
const changes = (before: Rows, after: Rows) =>
  [...after].flatMap(([table, now]) => {
    const was = new Set(before.get(table) ?? [])
    const is = new Set(now)
    const gone = [...was].filter((r) => !is.has(r))
    const added = now.filter((r) => !was.has(r))
    return gone.length + added.length === 0 ? [] : [{ table: table.split(".").pop()!, gone, added }]
  })

/** How many rows of each table a request removed and added. */
const counts = (changed: ReturnType<typeof changes>) =>
  Object.fromEntries(changed.map((t) => [t.table, { gone: t.gone.length, added: t.added.length }]))

describe("the keyed endpoints", () => {
  it("each have their refusals below", () => {
    const keyed = Object.values(Api.groups).flatMap((group) =>
      Object.values(group.endpoints)
        .filter(Idempotent.isKeyed)
        .map((endpoint) => `${group.identifier}.${endpoint.name}`)
    )
    expect([...new Set(cases.map((c) => c.endpoint))].sort()).toEqual(keyed.sort())
  })
})

for (const backend of serverBackends)
  describe.skipIf(backend.skip)(`a refused keyed command on ${backend.name}`, () => {
    let server: TestServer.LocalTestServer
    beforeAll(async () => {
      server = await backend.start()
    }, 120_000)
    afterAll(async () => {
      await server?.close()
    })

    /** The rows once background work on what was staged has settled: two reads alike. */
    const settled = async () => {
      let last = await server.sql(rows)
      for (let i = 0; i < 20; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        const next = await server.sql(rows)
        if (same(last, next)) return next
        last = next
      }
      throw new Error("the database did not settle")
    }

    it.each(cases.map((c) => [`${c.endpoint}: ${c.refusal}`, c] as const))(
      "%s leaves what it leaves without a key, and the stored answer",
      async (_, c) => {
        const m = await F.merchant(server)
        const ok = async (method: string, path: string, body?: unknown, key = m.test) => {
          const res = await server.request(method, path, { key, body })
          if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`)
          return res.body
        }
        const refused = await c.stage({ m, ok, server })
        const idempotencyKey = F.unique("key")
        const send = (keyed: boolean) =>
          server.request("POST", refused.path, {
            key: refused.key,
            body: refused.body,
            headers: keyed ? { "idempotency-key": idempotencyKey } : {}
          })
        /** The request's answer and what it changed, once background work has settled. */
        const sent = async (keyed: boolean) => {
          const before = await settled()
          const answer = await send(keyed)
          expect({ status: answer.status, code: answer.body?.code }).toEqual({
            status: refused.status,
            code: refused.code
          })
          return { answer, changed: changes(before, await settled()) }
        }
        const leaves = c.leaves ?? {}
        // Without a key: only what the refusal records by design (a refused charge's event).
        expect(counts((await sent(false)).changed)).toEqual(leaves)
        // With one: the same, and the stored answer.
        const first = await sent(true)
        expect(counts(first.changed)).toEqual({ ...leaves, idempotency_keys: { gone: 0, added: 1 } })
        const stored = first.changed.find((t) => t.table === "idempotency_keys")!
        expect(stored.added.map((r) => JSON.parse(r).response_status)).toEqual([refused.status])
        // The key answers the refusal again, and nothing more is stored.
        const before = await settled()
        const replay = await send(true)
        expect(replay.status).toBe(refused.status)
        expect(replay.headers.get("idempotent-replay")).toBe("true")
        expect(replay.text).toBe(first.answer.text)
        expect(changes(before, await settled())).toEqual([])
      },
      60_000
    )
  })
