/**
 * The bare minimum laari's charge is measured against: `POST /mandates/{id}/charges` with raw `node:http`
 * and `pg` on laari's own schema, doing the same work as laari's charge — key lookup (cached, as laari
 * caches it), `Idempotency-Key` claimed and its response stored in the charge's transaction, mandate and
 * payer locked, caps and balance checked, the transfer with its entries (house legs appended, as laari
 * does), the charge, the mandate's period total, the event numbered for its subject with its webhook
 * deliveries, the customer's notification — in as few round trips as SQL allows: BEGIN, claim, lock and
 * load, one statement of writes, COMMIT. No framework, no validation library, no tracing.
 *
 * Only a benchmark yardstick: it answers the bench's requests and nothing else. Several processes with
 * `BASELINE_PROCESSES` (node:cluster), like `LAARI_PROCESSES`.
 */
import cluster from "node:cluster"
import { createHash, createHmac, randomBytes, randomUUID } from "node:crypto"
import http from "node:http"
import pg from "pg"

const processes = Number(process.env.BASELINE_PROCESSES ?? 1)
if (cluster.isPrimary && processes > 1) {
  let listening = 0
  for (let i = 0; i < processes; i++)
    cluster.fork().once("listening", () => {
      if (++listening === processes) console.log(`baseline: all ${processes} processes listening`)
    })
  const stop = () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGTERM")
    setTimeout(() => process.exit(0), 500)
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
} else {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
  const keys = new Map<string, { merchantId: string; environment: string; scopes: Array<string> }>()
  const merchants = new Map<string, { name: string; feeBps: number }>()

  // Keys are stored as laari stores them (core's `ApiKeys.digest`): `h1:` + HMAC-SHA-256 under the deployment's
  // `api_key_hashes` secret in `server_secrets`, made by whichever process needs it first and read once.
  let hashSecret: Promise<Buffer> | undefined
  const loadHashSecret = async () => {
    await pool.query(
      `INSERT INTO server_secrets (name, value, created_at) VALUES ('api_key_hashes', $1, now())
       ON CONFLICT (name) DO NOTHING`,
      [randomBytes(32).toString("hex")]
    )
    const found = await pool.query("SELECT value FROM server_secrets WHERE name = 'api_key_hashes'")
    return Buffer.from(found.rows[0].value, "hex")
  }
  const keyDigest = async (key: string) => {
    hashSecret ??= loadHashSecret()
    return `h1:${createHmac("sha256", await hashSecret)
      .update(key, "utf8")
      .digest("hex")}`
  }

  const send = (res: http.ServerResponse, status: number, body: string) => {
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  }
  const problem = (res: http.ServerResponse, status: number, title: string) =>
    send(res, status, JSON.stringify({ type: "about:blank", title, status }))

  /** Year and month in the Maldives (UTC+5, no daylight saving): the period key. */
  const monthKey = (now: Date) => new Date(now.getTime() + 5 * 3600_000).toISOString().slice(0, 7)
  const maldives = (d: Date) => `${new Date(d.getTime() + 5 * 3600_000).toISOString().slice(0, 19)}+05:00`

  const charge = async (
    principal: { merchantId: string; environment: string },
    mandateId: string,
    idempotencyKey: string | undefined,
    raw: string
  ): Promise<[number, string]> => {
    let amount: unknown
    try {
      amount = (JSON.parse(raw) as { amount?: unknown }).amount
    } catch {
      return [400, JSON.stringify({ title: "Malformed JSON" })]
    }
    if (!Number.isSafeInteger(amount) || (amount as number) <= 0)
      return [400, JSON.stringify({ title: "amount must be a positive integer" })]
    const client = await pool.connect()
    try {
      await client.query("BEGIN")
      const now = new Date()
      const path = `/mandates/${mandateId}/charges`
      const fingerprint = createHash("sha256").update(raw).digest("hex")
      if (idempotencyKey !== undefined) {
        const claimed = await client.query(
          `INSERT INTO idempotency_keys (merchant_id, environment, method, path, key, fingerprint, created_at)
           VALUES ($1, $2, 'POST', $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING key`,
          [principal.merchantId, principal.environment, path, idempotencyKey, fingerprint, now]
        )
        if (claimed.rowCount === 0) {
          const held = await client.query(
            `SELECT response_status, response_body FROM idempotency_keys WHERE merchant_id = $1
             AND environment = $2 AND method = 'POST' AND path = $3 AND key = $4 FOR UPDATE`,
            [principal.merchantId, principal.environment, path, idempotencyKey]
          )
          await client.query("COMMIT")
          const row = held.rows[0]
          return row?.response_status ? [row.response_status, row.response_body] : [409, "{}"]
        }
      }
      const loaded = await client.query(
        `SELECT m.*, a.balance, a.wallet_limit, a.frozen, a.blocked_by_rules
         FROM mandates m JOIN ledger_accounts a ON a.id = 'customer:' || m.customer_id
         WHERE m.id = $1 AND m.merchant_id = $2 AND m.environment = $3
         FOR UPDATE OF m, a`,
        [mandateId, principal.merchantId, principal.environment]
      )
      const m = loaded.rows[0]
      if (m === undefined) {
        await client.query("ROLLBACK")
        return [404, JSON.stringify({ title: "Mandate not found" })]
      }
      const value = amount as number
      const periodKey = monthKey(now)
      const already = m.period_key === periodKey ? Number(m.period_charged) : 0
      const refused =
        m.status !== "ACTIVE" || m.expires_at <= now
          ? "MANDATE_NOT_ACTIVE"
          : value > Number(m.per_charge_cap)
            ? "PER_CHARGE_CAP_EXCEEDED"
            : m.period_cap !== null && already + value > Number(m.period_cap)
              ? "PERIOD_CAP_EXCEEDED"
              : m.frozen || m.blocked_by_rules
                ? "MANDATE_CHARGE_FAILED"
                : m.wallet_limit !== null && value > Number(m.wallet_limit)
                  ? "WALLET_LIMIT_EXCEEDED"
                  : Number(m.balance) < value
                    ? "INSUFFICIENT_FUNDS"
                    : undefined
      if (refused !== undefined) {
        await client.query("ROLLBACK")
        return [402, JSON.stringify({ code: refused })]
      }
      let merchant = merchants.get(m.merchant_id)
      if (merchant === undefined) {
        const r = await client.query("SELECT name, fee_bps FROM merchants WHERE id = $1", [m.merchant_id])
        merchant = { name: r.rows[0].name, feeBps: r.rows[0].fee_bps }
        merchants.set(m.merchant_id, merchant)
      }
      const fee = Math.floor((value * merchant.feeBps + 5_000) / 10_000)
      const chargeId = randomUUID()
      const transferId = `mandate-charge:${chargeId}`
      const periodCharged = m.period_cap === null ? 0 : already + value
      const body = JSON.stringify({
        id: chargeId,
        mandateId,
        amount: value,
        currency: "MVR",
        status: "SUCCEEDED",
        description: m.title,
        reference: m.reference,
        fee,
        netAmount: value - fee,
        periodKey,
        periodCharged,
        createdAt: maldives(now)
      })
      const sequenceSubject = mandateId
      const envelopeBefore = `{"id":"${randomUUID()}","type":"mandate.charge.succeeded","api_version":"2026-07-01","created":${Math.floor(now.getTime() / 1000)},"livemode":false,"sequence":`
      const envelopeAfter = `,"data":{"object":${body}}}`
      const merchantAccount = `merchant:${m.environment}:${m.merchant_id}`
      const feeAccount = `fee:${m.environment}`
      await client.query(
        `WITH t AS (INSERT INTO ledger_transfers (id, kind, environment, merchant_id, customer_id, amount, fee, memo, created_at)
             VALUES ($1, 'payment', $2, $3, $4, $5, $6, $7, $8)),
           c AS (UPDATE ledger_accounts SET balance = balance - $5 WHERE id = 'customer:' || $4),
           h AS (INSERT INTO ledger_accounts (id, kind, environment, merchant_id, balance, created_at)
             VALUES ($9, 'merchant', $2, $3, 0, $8), ($10, 'fee', $2, NULL, 0, $8) ON CONFLICT (id) DO NOTHING),
           e AS (INSERT INTO ledger_entries (transfer_id, account_id, amount, rolled)
             VALUES ($1, 'customer:' || $4, -$5::bigint, true), ($1, $9, $5::bigint - $6, false), ($1, $10, $6, false)),
           ch AS (INSERT INTO mandate_charges (id, mandate_id, merchant_id, environment, customer_id, amount,
               description, reference, fee, net_amount, period_key, period_charged, created_at)
             VALUES ($11, $12, $3, $2, $4, $5, $13, $14, $6, $5::bigint - $6, $15, $16, $8)),
           mu AS (UPDATE mandates SET period_key = $15, period_charged = $16 WHERE id = $12),
           s AS (INSERT INTO event_sequences (subject, value) VALUES ($17, 1)
             ON CONFLICT (subject) DO UPDATE SET value = event_sequences.value + 1 RETURNING value),
           ev AS (INSERT INTO events (id, merchant_id, environment, type, subject, created_at, envelope)
             SELECT $18, $3, $2, 'mandate.charge.succeeded', $17, $8, ($19 || s.value::text || $20)::json FROM s
             RETURNING id),
           d AS (INSERT INTO webhook_deliveries
               (id, merchant_id, endpoint_id, event_id, event_type, attempt, resend, status, due_at, created_at)
             SELECT gen_random_uuid(), w.merchant_id, w.id, ev.id, 'mandate.charge.succeeded', 1, false, 'PENDING', $8, $8
             FROM webhook_endpoints w, ev WHERE w.merchant_id = $3 AND w.environment = $2 AND w.status = 'ENABLED'
               AND w.deleted_at IS NULL AND ('*' = ANY (w.enabled_events) OR 'mandate.charge.succeeded' = ANY (w.enabled_events))),
           n AS (INSERT INTO notifications (id, customer_id, environment, kind, title, body, data, created_at)
             VALUES ($21, $4, $2, 'mandate.charge', $22, $22, $23::jsonb, $8))
         UPDATE idempotency_keys SET response_status = 201, response_headers = '{}', response_body = $24
         WHERE merchant_id = $3 AND environment = $2 AND method = 'POST' AND path = $25 AND key = $26`,
        [
          transferId,
          m.environment,
          m.merchant_id,
          m.customer_id,
          value,
          fee,
          `${merchant.name}: ${m.title}`,
          now,
          merchantAccount,
          feeAccount,
          chargeId,
          mandateId,
          m.title,
          m.reference,
          periodKey,
          periodCharged,
          sequenceSubject,
          randomUUID(),
          envelopeBefore,
          envelopeAfter,
          randomUUID(),
          `${merchant.name} charged MVR ${(value / 100).toFixed(2)}`,
          JSON.stringify({ mandate_id: mandateId, charge_id: chargeId, amount: value }),
          body,
          path,
          idempotencyKey ?? ""
        ]
      )
      await client.query("COMMIT")
      return [201, body]
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {})
      console.error(error)
      return [503, JSON.stringify({ title: "Service unavailable" })]
    } finally {
      client.release()
    }
  }

  const route = /^\/mandates\/([^/]+)\/charges$/
  const server = http.createServer((req, res) => {
    if (req.url === "/healthz") return send(res, 200, '{"status":"ok"}')
    const match = req.method === "POST" ? route.exec(req.url ?? "") : null
    if (match === null) return problem(res, 404, "Not found")
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", async () => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
      if (token === undefined) return problem(res, 401, "Unauthorized")
      const hash = await keyDigest(token)
      let principal = keys.get(hash)
      if (principal === undefined) {
        const found = await pool.query(
          "SELECT merchant_id, environment, scopes FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
          [hash]
        )
        if (found.rows[0] === undefined) return problem(res, 401, "Unauthorized")
        principal = {
          merchantId: found.rows[0].merchant_id,
          environment: found.rows[0].environment,
          scopes: found.rows[0].scopes
        }
        keys.set(hash, principal)
      }
      if (!principal.scopes.includes("mandates:write")) return problem(res, 403, "Forbidden")
      const key = req.headers["idempotency-key"]
      const [status, body] = await charge(
        principal,
        match[1]!,
        typeof key === "string" ? key : undefined,
        Buffer.concat(chunks).toString()
      )
      send(res, status, body)
    })
  })
  server.listen(Number(process.env.PORT ?? 4100))
  process.on("SIGTERM", () => {
    server.close()
    void pool.end()
    setTimeout(() => process.exit(0), 200).unref()
  })
}
