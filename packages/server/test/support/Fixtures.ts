/**
 * Merchants, keys and customers made through the operator API, so every test starts from its own data.
 */
import type { TestServer } from "./TestServer.js"

export interface Merchant {
  readonly id: string
  readonly outletId: number
  /** `sk_test_` with every scope. */
  readonly test: string
  /** `sk_live_` with every scope. */
  readonly live: string
  readonly publishable: string
  readonly key: (environment: "test" | "live", scopes: ReadonlyArray<string>) => Promise<string>
}

let counter = 0
export const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`

export const merchant = async (server: TestServer, body: Record<string, unknown> = {}): Promise<Merchant> => {
  const created = await server.ops("POST", "/ops/merchants", {
    name: unique("Merchant"),
    outlets: [{ name: "Main" }],
    ...body
  })
  if (created.status !== 201) throw new Error(`merchant: ${created.status} ${created.text}`)
  const id: string = created.body.id
  const key = async (environment: "test" | "live", scopes?: ReadonlyArray<string>, kind = "secret") => {
    const res = await server.ops("POST", `/ops/merchants/${id}/keys`, {
      environment,
      kind,
      ...(scopes ? { scopes } : {})
    })
    if (res.status !== 201) throw new Error(`key: ${res.status} ${res.text}`)
    return res.body.key as string
  }
  return {
    id,
    outletId: created.body.outlets[0].id,
    test: await key("test"),
    live: await key("live"),
    publishable: await key("test", undefined, "publishable"),
    key: (environment, scopes) => key(environment, scopes)
  }
}

/** Seven-digit Maldivian numbers, from a random start so that servers shared by test files rarely collide. */
let phones = Math.floor(Math.random() * 900_000)
export const customer = async (
  server: TestServer,
  body: { environment?: "test" | "live"; balance?: number; time_zone?: string } = {}
) => {
  const phone = `+960 7${String(phones++ % 1_000_000).padStart(6, "0")}`
  const res = await server.ops("POST", "/ops/customers", {
    environment: "live",
    phone,
    name: "Aishath",
    balance: 0,
    ...body
  })
  if (res.status !== 201) throw new Error(`customer: ${res.status} ${res.text}`)
  return res.body as { id: string; phone: string; balance: number }
}

export const mandateBody = (overrides: Record<string, unknown> = {}) => ({
  reference: unique("ref"),
  title: "Weekly groceries",
  per_charge_cap: 50_000,
  ...overrides
})

/**
 * `count` monthly subscriptions of 10.00 MVR, each paid through its checkout session by the sandbox payer:
 * their ids (renewals to watch after a fault).
 */
export const paidSubscriptions = async (server: TestServer, key: string, count: number, prefix = "sub") => {
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) {
    const session = await server.request("POST", "/checkout/sessions", {
      key,
      body: {
        mode: "SUBSCRIPTION",
        title: "Island Fibre",
        reference: unique(prefix),
        price_data: { name: "Fibre 50", amount: 1_000, interval: "MONTH" }
      }
    })
    if (session.status !== 200) throw new Error(`checkout session: ${session.status} ${session.text}`)
    const paid = await server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, {
      key
    })
    if (paid.status !== 200) throw new Error(`paying the session: ${paid.status} ${paid.text}`)
    ids.push(paid.body.subscription.id)
  }
  return ids
}

/** Recorded events of a merchant, newest first. */
export const events = async (server: TestServer, merchantId: string, type?: string) => {
  const res = await server.ops(
    "GET",
    `/ops/events?merchant_id=${merchantId}${type ? `&type=${type}` : ""}&limit=1000`
  )
  return res.body as Array<{
    id: string
    type: string
    api_version: string
    created: number
    livemode: boolean
    data: { object: any }
  }>
}
