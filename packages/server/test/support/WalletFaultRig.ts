/**
 * What the wallet connector's fault suites share: laari's database read directly, a request retried
 * until its answer is final (a `503` is not, nor a `409` for a request under the key still running, nor no answer when laari
 * itself was killed), and
 * the wait until no movement is pending.
 */
import pg from "pg"
import type * as TestServer from "./TestServer.js"

/** One statement on `url`, on a connection of its own (laari may be restarting meanwhile). */
export const query = async <A>(url: string, statement: string): Promise<Array<A>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(statement)).rows as Array<A>
  } finally {
    await client.end()
  }
}

export interface Final {
  readonly response: TestServer.Response
  /** How many requests it took. */
  readonly attempts: number
}

/**
 * `send` again (the caller keeps its Idempotency-Key) until its answer is final, within `ms`; the answers
 * that were not are counted in `interim` by status and code.
 */
export const untilFinal = async (
  send: () => Promise<TestServer.Response>,
  interim: Map<string, number>,
  ms = 120_000
): Promise<Final> => {
  const deadline = Date.now() + ms
  for (let attempts = 1; ; attempts++) {
    const res = await send().catch(() => undefined)
    const interimAnswer =
      res === undefined ||
      res.status === 503 ||
      (res.status === 409 && res.body?.code === "REQUEST_IN_PROGRESS")
    if (!interimAnswer) return { response: res, attempts }
    const seen = res === undefined ? "no answer" : `${res.status} ${res.body?.code}`
    interim.set(seen, (interim.get(seen) ?? 0) + 1)
    if (Date.now() > deadline) throw new Error(`no final answer: ${res?.status} ${res?.text}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** Waits, within `ms`, until no movement in laari's database is pending. */
export const settled = async (url: string, ms = 120_000) => {
  const deadline = Date.now() + ms
  for (;;) {
    const [row] = await query<{ n: string }>(
      url,
      `SELECT count(*) AS n FROM wallet_movements WHERE status = 'pending'`
    )
    if (Number(row!.n) === 0) return
    if (Date.now() > deadline) throw new Error(`${row!.n} movements still pending`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** Today in the Maldives, as the core's statement and reconciliation name a day. */
export const maldivesToday = () => new Date(Date.now() + 5 * 3_600_000).toISOString().slice(0, 10)
