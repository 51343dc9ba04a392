/**
 * Renewals at scale: `BENCH_RENEWALS` subscriptions (default 100,000) across
 * `BENCH_PAYERS` payers (default 10,000), all due now, renewed by `BENCH_RENEWAL_PROCESSES` server
 * processes (default 4) on PostgreSQL. Prints the time from the processes listening to the last renewal
 * paid, the rate, each process's memory over the run, and the exactly-once checks.
 *
 * Seeding through the API would take longer than the run, so one subscription is made through the API
 * and copied in SQL, with every time moved one month back: each copy has paid its first month and its
 * renewal is due. The payers are funded from the ledger's funding account, as the sandbox funds wallets.
 */
import { execFileSync } from "node:child_process"
import pg from "pg"
import * as Load from "./Load.js"
import * as Smoke from "./Smoke.js"
import * as Spawn from "./Spawn.js"
import { OpsToken } from "./Workload.js"

export interface RenewalsResult {
  readonly benchmark: "renewals"
  readonly subscriptions: number
  readonly payers: number
  readonly processes: number
  readonly seconds: number
  readonly renewalsPerSecond: number
  readonly paid: number
  readonly exactlyOnce: boolean
  readonly moneyConserved: boolean
  readonly rssMiB: { readonly first: number; readonly last: number; readonly max: number }
}

/** Copies the `template` row of `table` `n` times, `g` running 1..n, with `overrides` as SQL expressions. */
const clone = async (
  client: pg.Client,
  table: string,
  where: string,
  n: number,
  overrides: Record<string, string>
) => {
  const columns = (
    await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
       WHERE table_name = $1 AND table_schema = 'public' AND is_identity = 'NO' ORDER BY ordinal_position`,
      [table]
    )
  ).rows.map((r) => r.column_name)
  const select = columns.map((c) => overrides[c] ?? `t.${c}`).join(", ")
  // The template read once: scanned again for each copy, the growing table would make this quadratic.
  await client.query(
    `WITH t AS MATERIALIZED (SELECT * FROM ${table} t WHERE ${where})
     INSERT INTO ${table} (${columns.join(", ")})
     SELECT ${select} FROM t, generate_series(1, ${n}) g`
  )
  // Fresh statistics: the foreign-key checks of the next copy would otherwise plan a sequential scan of
  // a table they take to hold one row, once per row inserted.
  await client.query(`ANALYZE ${table}`)
}

const seed = async (url: string, template: string, n: number, payers: number) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query("BEGIN")
    const payer = (g: string) => `md5('payer' || ((${g}) % ${payers}))::uuid`
    const balance = 1_000_000_000
    await client.query(`INSERT INTO customers (id, environment, phone, name, created_at)
      SELECT ${payer("g")}, 'test', '+960 bench-' || g, 'Bench payer ' || g, now()
      FROM generate_series(0, ${payers - 1}) g`)
    await client.query(`INSERT INTO ledger_accounts (id, kind, environment, customer_id, balance, time_zone, created_at)
      SELECT 'customer:' || ${payer("g")}, 'customer', 'test', ${payer("g")}, ${balance}, 'Indian/Maldives', now()
      FROM generate_series(0, ${payers - 1}) g`)
    await client.query(`INSERT INTO ledger_transfers (id, kind, environment, merchant_id, customer_id, amount, fee, memo, created_at)
      SELECT 'bench-funding:' || g, 'funding', 'test', NULL, ${payer("g")}, ${balance}, 0, 'bench', now()
      FROM generate_series(0, ${payers - 1}) g`)
    await client.query(`INSERT INTO ledger_entries (transfer_id, account_id, amount, rolled)
      SELECT 'bench-funding:' || g, 'customer:' || ${payer("g")}, ${balance}, true FROM generate_series(0, ${payers - 1}) g
      UNION ALL
      SELECT 'bench-funding:' || g, 'funding:test', -${balance}, false FROM generate_series(0, ${payers - 1}) g`)
    const back = (c: string) => `t.${c} - interval '1 month'`
    const session = "md5('session' || g)::uuid"
    const subscription = "md5('subscription' || g)::uuid"
    await clone(client, "checkout_sessions", `t.subscription_id = '${template}'`, n, {
      id: session,
      reference: "'bench-' || g",
      customer_id: payer("g"),
      payment_id: `'checkout:' || ${session}`,
      subscription_id: subscription,
      expires_at: back("expires_at"),
      completed_at: back("completed_at"),
      created_at: back("created_at")
    })
    await clone(client, "subscriptions", `t.id = '${template}'`, n, {
      id: subscription,
      reference: "'bench-' || g",
      checkout_session_id: session,
      customer_id: payer("g"),
      billing_cycle_anchor: back("billing_cycle_anchor"),
      current_period_start: back("current_period_start"),
      current_period_end: back("current_period_end"),
      next_billing_at: back("next_billing_at"),
      due_at: back("due_at"),
      created_at: back("created_at")
    })
    await clone(client, "invoices", `t.subscription_id = '${template}'`, n, {
      id: "md5('invoice' || g)::uuid",
      subscription_id: subscription,
      subscription_reference: "'bench-' || g",
      payment_intent_id: `'checkout:' || ${session}`,
      period_start: back("period_start"),
      period_end: back("period_end"),
      period_key:
        "to_char((t.period_start - interval '1 month') AT TIME ZONE 'Indian/Maldives', 'YYYY-MM-DD')",
      paid_at: back("paid_at"),
      last_attempt_at: back("last_attempt_at"),
      created_at: back("created_at")
    })
    await client.query("COMMIT")
    await client.query("ANALYZE")
  } finally {
    await client.end()
  }
}

/** Resident memory of each child of `pid`, in MiB. */
const childRss = (pid: number): Array<number> => {
  try {
    return execFileSync("ps", ["-o", "rss=", "--ppid", String(pid)])
      .toString()
      .trim()
      .split(/\s+/)
      .filter((s) => s !== "")
      .map((kb) => Number(kb) / 1024)
  } catch {
    return []
  }
}

/**
 * `nodeArgs` for the renewing processes; `started` is told their supervisor's pid once they listen, and
 * `finished` is called once the last renewal is paid, while they still run.
 */
export interface Options {
  readonly nodeArgs?: ReadonlyArray<string>
  readonly started?: (pid: number) => void
  readonly finished?: () => void
}

export const run = async (url: string, options: Options = {}): Promise<RenewalsResult> => {
  const n = Number(process.env.BENCH_RENEWALS ?? Smoke.size(100_000, 50))
  const payers = Number(process.env.BENCH_PAYERS ?? Smoke.size(10_000, 25))
  const processes = Number(process.env.BENCH_RENEWAL_PROCESSES ?? Smoke.size(4, 2))
  const deadlineSeconds = Number(process.env.BENCH_RENEWAL_DEADLINE ?? Smoke.size(900, 120))

  // One subscription through the API: the template.
  const first = await Spawn.laari({ DATABASE_URL: url })
  const api = Load.client(first.base)
  const merchant = await api.json("POST", "/ops/merchants", OpsToken, { name: "Renewals", outlets: [] })
  const { key } = await api.json("POST", `/ops/merchants/${merchant.id}/keys`, OpsToken, {
    environment: "test"
  })
  const session = await api.json("POST", "/checkout/sessions", key, {
    mode: "SUBSCRIPTION",
    title: "Island Fibre",
    reference: "template",
    price_data: { name: "Fibre 50", amount: 1_000, interval: "MONTH" }
  })
  const paid = await api.json("POST", `/test-helpers/checkout/sessions/${session.id}/pay`, key)
  api.close()
  await first.stop()
  await seed(url, paid.subscription.id, n, payers)

  const db = new pg.Client({ connectionString: url })
  await db.connect()
  const count = async (query: string) => Number((await db.query<{ n: string }>(query)).rows[0]!.n)
  const balanceBefore = await count(
    "SELECT sum(balance) AS n FROM ledger_accounts WHERE id LIKE 'customer:%' AND customer_id IN (SELECT customer_id FROM subscriptions WHERE reference LIKE 'bench-%')"
  )

  const servers = await Spawn.laari(
    { DATABASE_URL: url },
    { processes, ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }) }
  )
  options.started?.(servers.child.pid!)
  const started = performance.now()
  const rss: Array<number> = []
  const paidCount = () =>
    count(
      "SELECT count(*) AS n FROM invoices WHERE period_index = 1 AND status = 'PAID' AND subscription_reference LIKE 'bench-%'"
    )
  let done = 0
  while (performance.now() - started < deadlineSeconds * 1000) {
    // While any subscription is due or leased (a charged one is next due a month on), one probe of the
    // due index says so; the paid invoices are counted once none is. Counted every 250 ms, a scan of
    // every invoice was a tenth of PostgreSQL's CPU in the run it measured.
    const waiting = await count(
      "SELECT count(*) AS n FROM (SELECT 1 FROM subscriptions WHERE due_at < now() + interval '1 day' ORDER BY due_at LIMIT 1) w"
    )
    rss.push(...childRss(servers.child.pid!))
    if (waiting === 0) {
      done = await paidCount()
      if (done >= n) break
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  const seconds = (performance.now() - started) / 1000
  if (done < n) done = await paidCount()
  options.finished?.()
  await servers.stop()

  const duplicated = await count(
    "SELECT count(*) AS n FROM (SELECT subscription_id FROM invoices WHERE period_index = 1 GROUP BY 1 HAVING count(*) > 1) d"
  )
  const transfers = await count(
    "SELECT count(*) AS n FROM ledger_transfers t JOIN invoices i ON t.id = i.payment_intent_id WHERE i.period_index = 1"
  )
  const balanceAfter = await count(
    "SELECT sum(balance) AS n FROM ledger_accounts WHERE id LIKE 'customer:%' AND customer_id IN (SELECT customer_id FROM subscriptions WHERE reference LIKE 'bench-%')"
  )
  await db.end()
  const mib = (x: number | undefined) => Number((x ?? 0).toFixed(1))
  return {
    benchmark: "renewals",
    subscriptions: n,
    payers,
    processes,
    seconds: Number(seconds.toFixed(2)),
    renewalsPerSecond: Number((done / seconds).toFixed(1)),
    paid: done,
    exactlyOnce: duplicated === 0 && transfers === done,
    moneyConserved: balanceBefore - balanceAfter === done * 1_000,
    rssMiB: {
      first: mib(rss.slice(0, processes).reduce((a, b) => Math.max(a, b), 0)),
      last: mib(rss.slice(-processes).reduce((a, b) => Math.max(a, b), 0)),
      max: mib(Math.max(...rss))
    }
  }
}
