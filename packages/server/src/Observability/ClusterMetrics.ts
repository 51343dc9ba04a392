/**
 * `/metrics` of several processes (`LAARI_PROCESSES`) as one service: the process that takes the scrape
 * asks its siblings for their registries over node:cluster's IPC, relayed by the supervisor (workers
 * have no channel to each other), and aggregates them with prom-client's own rules (`Metrics.ts`).
 *
 * Every wait is bounded: the supervisor waits `SiblingTimeoutMs` for each sibling and answers with what
 * came, saying how many did not answer; the asking process waits a little longer for the supervisor.
 * A scrape is never held up by a stuck process, only made partial, and the misses are counted.
 */
import cluster, { type Worker } from "node:cluster"
import type * as Prometheus from "prom-client"

/** How long a sibling has to send its registry. */
export const SiblingTimeoutMs = 1_000

/** The asking process's own bound: the supervisor's wait, and some time for the messages. */
const AnswerTimeoutMs = SiblingTimeoutMs + 1_000

type Registries = ReadonlyArray<
  ReadonlyArray<Prometheus.MetricObjectWithValues<Prometheus.MetricValue<string>>>
>

/** worker to supervisor: gather the others' registries. */
interface Ask {
  readonly type: "laari:metrics:ask"
  readonly id: number
}
/** supervisor to the others: send yours. */
interface Get {
  readonly type: "laari:metrics:get"
  readonly id: number
}
/** the others to supervisor. */
interface Got {
  readonly type: "laari:metrics:got"
  readonly id: number
  readonly metrics: Registries[number]
}
/** supervisor to the asking worker. */
interface Answer {
  readonly type: "laari:metrics:answer"
  readonly id: number
  readonly registries: Registries
  readonly missed: number
}

const is = <M extends { readonly type: string }>(message: unknown, type: M["type"]): message is M =>
  typeof message === "object" && message !== null && (message as { type?: unknown }).type === type

/** Whether this process is one of several under a supervisor. */
export const inCluster = (): boolean => cluster.isWorker && typeof process.send === "function"

/**
 * In a worker: answers the supervisor's requests for `registry`. Returns the function that stops.
 */
export const answer = (registry: Prometheus.Registry): (() => void) => {
  const onMessage = (message: unknown) => {
    if (!is<Get>(message, "laari:metrics:get")) return
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: "laari:metrics:got", id: message.id, metrics } satisfies Got),
      // Nothing sent: the supervisor counts this process as missed.
      () => undefined
    )
  }
  process.on("message", onMessage)
  return () => process.off("message", onMessage)
}

let asked = 0
const waiting = new Map<number, (answer: Answer) => void>()
let listening = false

/**
 * In a worker: the registries of the other processes, and how many did not answer in time (all of them,
 * counted as one, when the supervisor itself did not).
 */
export const siblings = (): Promise<{ readonly registries: Registries; readonly missed: number }> =>
  new Promise((resolve) => {
    if (!listening) {
      listening = true
      process.on("message", (message: unknown) => {
        if (is<Answer>(message, "laari:metrics:answer")) waiting.get(message.id)?.(message)
      })
    }
    const id = ++asked
    const timer = setTimeout(() => {
      waiting.delete(id)
      resolve({ registries: [], missed: 1 })
    }, AnswerTimeoutMs)
    waiting.set(id, (message) => {
      clearTimeout(timer)
      waiting.delete(id)
      resolve({ registries: message.registries, missed: message.missed })
    })
    process.send?.({ type: "laari:metrics:ask", id } satisfies Ask)
  })

/**
 * In the supervisor: relays a worker's ask to `others(asker)` and answers it with what came back within
 * `SiblingTimeoutMs`.
 */
export const relay = (others: (asker: Worker) => ReadonlyArray<Worker>): void => {
  let relayed = 0
  const pending = new Map<
    number,
    { readonly got: Array<Registries[number]>; readonly from: Set<Worker>; readonly reply: () => void }
  >()
  cluster.on("message", (worker, message: unknown) => {
    if (is<Got>(message, "laari:metrics:got")) {
      const request = pending.get(message.id)
      if (request === undefined || !request.from.delete(worker)) return
      request.got.push(message.metrics)
      // Answered as soon as every sibling has.
      if (request.from.size === 0) request.reply()
      return
    }
    if (!is<Ask>(message, "laari:metrics:ask")) return
    const id = ++relayed
    const targets = others(worker).filter((w) => w.isConnected())
    const got: Array<Registries[number]> = []
    const from = new Set(targets)
    const reply = () => {
      if (!pending.delete(id)) return
      clearTimeout(timer)
      if (worker.isConnected())
        worker.send({
          type: "laari:metrics:answer",
          id: message.id,
          registries: got,
          missed: from.size
        } satisfies Answer)
    }
    const timer = setTimeout(reply, SiblingTimeoutMs)
    pending.set(id, { got, from, reply })
    for (const target of targets) target.send({ type: "laari:metrics:get", id } satisfies Get)
    if (targets.length === 0) reply()
  })
}
