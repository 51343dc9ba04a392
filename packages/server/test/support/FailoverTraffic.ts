/**
 * The steady mix of the failover suite, sent through HAProxy as a merchant's systems would send it:
 * mandate charges, QR payments (a dynamic code, then the payer pays it) and checkout payments (a session,
 * then the payer pays it). Every request has a deadline; a charge whose answer is lost (a reset, a 502
 * from HAProxy, a 503, a timeout) is sent again with the same Idempotency-Key until it gets its 201, as the
 * README tells clients to. What the clients were told is logged, to be compared with the database.
 */
import * as F from "./Fixtures.js"
import * as Invariants from "./Invariants.js"

/** Longer than any bound laari sets itself; past it a request counts as hung (status -1). */
const Hang = 30_000
/** How long a client goes on retrying one charge with its key before it gives up. */
const RetryFor = 45_000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface Answer {
  readonly status: number
  /** When the request was sent and answered, `performance.now()`. */
  readonly sent: number
  readonly at: number
  /** For a 503: whether it said when to retry (`Retry-After`). */
  readonly retryAfter?: boolean
}

export interface Log {
  readonly answers: Array<Answer>
  /** Ids of what a 201 (a 200 for a paid checkout session) acknowledged. */
  readonly charges: Array<string>
  readonly qrPayments: Array<string>
  readonly checkouts: Array<string>
  /** Charge keys given up on after `RetryFor` (their outcome stays unknown to the client). */
  readonly abandoned: Array<string>
}

export const emptyLog = (): Log => ({
  answers: [],
  charges: [],
  qrPayments: [],
  checkouts: [],
  abandoned: []
})

export interface Merchant {
  readonly id: string
  readonly key: string
  readonly outletId: number
  readonly mandates: ReadonlyArray<string>
}

const call = async (
  log: Log,
  baseUrl: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  headers: Record<string, string> = {}
): Promise<{ status: number; body: any }> => {
  const sent = performance.now()
  let status: number
  let parsed: any
  let retryAfter: boolean | undefined
  try {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      signal: AbortSignal.timeout(Hang),
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    status = res.status
    if (status === 503) retryAfter = res.headers.get("retry-after") !== null
    const text = await res.text()
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = text
    }
  } catch (e) {
    status = e instanceof Error && e.name === "TimeoutError" ? -1 : 0
  }
  log.answers.push({
    status,
    sent,
    at: performance.now(),
    ...(retryAfter === undefined ? {} : { retryAfter })
  })
  return { status, body: parsed }
}

/** Lost answers: the request may or may not have run. */
const unknown = (status: number) =>
  status === 0 || status === 502 || status === 503 || status === 504 || status === 409

/** A create or charge with an Idempotency-Key, sent again with the same key while its answer is lost. */
const withKey = async (
  log: Log,
  baseUrl: string,
  path: string,
  key: string,
  body: unknown,
  ok: number
): Promise<{ status: number; body: any; idempotencyKey: string }> => {
  const idempotencyKey = F.unique("ha")
  const until = performance.now() + RetryFor
  for (;;) {
    const r = await call(log, baseUrl, "POST", path, key, body, { "idempotency-key": idempotencyKey })
    if (r.status === ok || !unknown(r.status) || performance.now() > until) return { ...r, idempotencyKey }
    await sleep(200)
  }
}

/**
 * Sets up the merchant: a webhook endpoint at `hookUrl` for every event (first, so that every event of
 * the merchant is delivered), a well-funded sandbox payer and `mandates` mandates.
 */
export const setup = async (
  server: {
    readonly ops: (m: string, p: string, b?: unknown) => Promise<{ status: number; body: any; text: string }>
  },
  baseUrl: string,
  hookUrl: string,
  mandates = 4
): Promise<Merchant> => {
  const m = await F.merchant(server as never)
  const log = emptyLog()
  const hook = await withKey(
    log,
    baseUrl,
    "/webhook-endpoints",
    m.test,
    { url: hookUrl, enabled_events: ["*"] },
    201
  )
  if (hook.status !== 201) throw new Error(`webhook endpoint: ${hook.status} ${JSON.stringify(hook.body)}`)
  await call(log, baseUrl, "POST", "/test-helpers/payer", m.test, { balance: 1_000_000_000_000 })
  const ids: Array<string> = []
  for (let i = 0; i < mandates; i++) {
    const created = await withKey(log, baseUrl, "/mandates", m.test, F.mandateBody(), 201)
    if (created.status !== 201) throw new Error(`mandate: ${created.status} ${JSON.stringify(created.body)}`)
    ids.push(created.body.id)
  }
  return { id: m.id, key: m.test, outletId: m.outletId, mandates: ids }
}

/** Runs the mix until `stop()` is called; resolves with the log once every client has finished. */
export const run = (baseUrl: string, merchant: Merchant, log: Log) => {
  let running = true
  const chargeClient = async (worker: number) => {
    for (let n = 0; running; n++) {
      const mandate = merchant.mandates[(worker + n) % merchant.mandates.length]!
      const r = await withKey(
        log,
        baseUrl,
        `/mandates/${mandate}/charges`,
        merchant.key,
        { amount: 1_000 },
        201
      )
      if (r.status === 201) log.charges.push(r.body.id)
      else if (unknown(r.status)) log.abandoned.push(r.idempotencyKey)
      else await sleep(100)
    }
  }
  const qrClient = async () => {
    while (running) {
      const code = await withKey(
        log,
        baseUrl,
        "/qr-codes",
        merchant.key,
        { outlet_id: merchant.outletId, type: "DYNAMIC", amount: 2_500 },
        201
      )
      if (code.status !== 201) {
        await sleep(100)
        continue
      }
      // The payer's side has no key: a lost answer is not sent again (the payer would rescan).
      const paid = await call(log, baseUrl, "POST", "/test-helpers/qr-codes/pay", merchant.key, {
        payload: code.body.payload
      })
      if (paid.status === 201) log.qrPayments.push(paid.body.id)
    }
  }
  const checkoutClient = async () => {
    while (running) {
      const session = await withKey(
        log,
        baseUrl,
        "/checkout/sessions",
        merchant.key,
        { title: "Island Fibre top-up", reference: F.unique("co"), amount: 3_000 },
        200
      )
      if (session.status !== 200) {
        await sleep(100)
        continue
      }
      const paid = await call(
        log,
        baseUrl,
        "POST",
        `/test-helpers/checkout/sessions/${session.body.id}/pay`,
        merchant.key
      )
      if (paid.status === 200) log.checkouts.push(session.body.id)
    }
  }
  const clients = Promise.all([
    ...Array.from({ length: 4 }, (_, w) => chargeClient(w)),
    qrClient(),
    checkoutClient()
  ])
  return {
    stop: async () => {
      running = false
      await clients
      return log
    }
  }
}

export interface Counts {
  readonly acknowledged: number
  readonly found: number
  readonly doubled: number
  readonly statuses: Record<string, number>
}

/** What the clients were acknowledged, looked up in the database at `url`; and what is there twice. */
export const reconcile = (url: string, merchant: Merchant, log: Log): Promise<Counts> =>
  Invariants.withClient(url, async (db) => {
    const count = async (query: string, params: ReadonlyArray<unknown>) =>
      (await db.query<{ n: number }>(query, [...params])).rows[0]!.n
    const foundCharges = await count(
      "SELECT count(*)::int AS n FROM mandate_charges WHERE id::text = ANY($1)",
      [log.charges]
    )
    const foundQr = await count("SELECT count(*)::int AS n FROM qr_payments WHERE id::text = ANY($1)", [
      log.qrPayments
    ])
    const foundCheckouts = await count(
      `SELECT count(*)::int AS n FROM checkout_sessions s WHERE s.id::text = ANY($1) AND s.status = 'COMPLETE'
         AND EXISTS (SELECT 1 FROM ledger_transfers t WHERE t.id = s.payment_id)`,
      [log.checkouts]
    )
    // Twice: one dynamic code paid twice, one acknowledged id twice in the log, or more charges in the
    // database than the keys the clients sent (each key charges at most once).
    const qrTwice = await count(
      "SELECT count(*)::int AS n FROM (SELECT qr_code_id FROM qr_payments WHERE merchant_id = $1 GROUP BY 1 HAVING count(*) > 1) d",
      [merchant.id]
    )
    const logTwice =
      log.charges.length - new Set(log.charges).size + log.qrPayments.length - new Set(log.qrPayments).size
    const charges = await count("SELECT count(*)::int AS n FROM mandate_charges WHERE merchant_id = $1", [
      merchant.id
    ])
    const keysSent = new Set(log.charges).size + log.abandoned.length
    const statuses: Record<string, number> = {}
    for (const a of log.answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1
    return {
      acknowledged: log.charges.length + log.qrPayments.length + log.checkouts.length,
      found: foundCharges + foundQr + foundCheckouts,
      doubled: qrTwice + logTwice + Math.max(0, charges - keysSent),
      statuses
    }
  })
