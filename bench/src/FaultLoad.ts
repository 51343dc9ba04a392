/**
 * The steady charge load of the failover part: `concurrency` clients charging through HAProxy, each
 * charge with a new `Idempotency-Key`, sent again with the same key while its answer is lost (a 503 with
 * `Retry-After`, a 502 or 504 from HAProxy, a 409 for a key still in flight, a refused or reset
 * connection), as the README tells clients to. Every answer is logged with when it was sent and
 * received, and every charge a 201 acknowledged, to be looked up in the database afterwards.
 *
 * Retries wait 200 ms rather than the `Retry-After` second: the first 201 after a fault is then seen
 * within 0.2 s of when the service could give it (a patient client would see it up to 1 s later).
 */
import { randomUUID } from "node:crypto"
import * as Load from "./Load.js"
import type * as Workload from "./Workload.js"

const RetryDelayMs = 200

export interface Answer {
  /** The HTTP status, or 0 when no answer came (`error` says why). */
  readonly status: number
  readonly error?: string
  /** `performance.now()` when the request was sent and when it was answered. */
  readonly sent: number
  readonly at: number
}

export interface Log {
  readonly answers: Array<Answer>
  /** Ids of the charges a 201 acknowledged. */
  readonly charges: Array<string>
}

/** An answer that leaves the charge's outcome unknown: the same key is sent again. */
const lost = (status: number) =>
  status === 0 || status === 409 || status === 502 || status === 503 || status === 504

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * One charge of 10.00 MVR on `target` with a new key, sent again with that key while its answer is lost,
 * for up to 30 s; every answer logged. Resolves with the last status.
 */
export const charge = async (client: Load.Client, log: Log, target: Workload.Target): Promise<number> => {
  const key = randomUUID()
  const giveUp = performance.now() + 30_000
  for (;;) {
    const sent = performance.now()
    let status = 0
    try {
      const res = await client.request(
        "POST",
        `/mandates/${target.mandateId}/charges`,
        { authorization: `Bearer ${target.key}`, "idempotency-key": key },
        { amount: 1000 }
      )
      status = res.status
      log.answers.push({ status, sent, at: performance.now() })
      if (status === 201) log.charges.push(JSON.parse(res.body).id)
    } catch (error) {
      const code = (error as { readonly code?: string }).code ?? String(error)
      log.answers.push({ status, error: code, sent, at: performance.now() })
    }
    if (!lost(status) || performance.now() > giveUp) return status
    await sleep(RetryDelayMs)
  }
}

/** `charge` as a shot of `Load.closedLoop`, logging into `log`. */
export const shot =
  (client: Load.Client, targets: ReadonlyArray<Workload.Target>, log: Log): Load.Shot =>
  async (i) => {
    const status = await charge(client, log, targets[i % targets.length]!)
    return { ok: status === 201, status }
  }

/** Answers that left a charge's outcome unknown (each was followed by the same key again). */
export const lostAnswers = (log: Log) => log.answers.filter((a) => lost(a.status)).length

/** Starts the load at `base`; `stop` resolves with the log once every client has had its last answer. */
export const start = (base: string, targets: ReadonlyArray<Workload.Target>, concurrency: number) => {
  const client = Load.client(base)
  const log: Log = { answers: [], charges: [] }
  let running = true
  const worker = async (w: number) => {
    // Once stopped, a charge whose answer was lost is still sent again until it is known (or 30 s).
    for (let n = 0; running; n++) await charge(client, log, targets[(w + n * concurrency) % targets.length]!)
  }
  const workers = Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)))
  return {
    log,
    /** Resolves with the first 201 of a request sent at or after `since`, or undefined after `timeoutMs`. */
    firstSuccessAfter: async (since: number, timeoutMs: number) => {
      const deadline = performance.now() + timeoutMs
      for (;;) {
        const found = log.answers.find((a) => a.status === 201 && a.sent >= since)
        if (found !== undefined || performance.now() > deadline) return found
        await sleep(20)
      }
    },
    stop: async () => {
      running = false
      await workers
      client.close()
      return log
    }
  }
}

/** Answers by status (`0:ECONNRESET` for no answer), for the figures. */
export const byStatus = (answers: ReadonlyArray<Answer>) => {
  const counts: Record<string, number> = {}
  for (const a of answers) {
    const key = a.status === 0 ? `0:${a.error}` : String(a.status)
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}
