/**
 * How the conformance suite calls a core: Node's `fetch`, a bounded timeout per call, the bearer token and
 * a fresh `Request-Id` on every call. Every call is logged with whether its answer carried the `Request-Id`
 * back, so one rule can judge them all at the end.
 */
import { RequestIdHeader } from "@laari/core/wallet/Connector"
import { Data, Effect, ParseResult, Schema } from "effect"

/** A rule's check did not hold: `detail` says what was seen. */
export class Broken extends Data.TaggedError("Broken")<{ readonly detail: string }> {}

export const broken = (detail: string) => Effect.fail(new Broken({ detail }))

/** One answer of the core, its body parsed as JSON where it is JSON. */
export interface Answer {
  readonly call: string
  readonly status: number
  readonly body: unknown
  readonly text: string
}

export interface Logged {
  readonly call: string
  readonly sent: string
  readonly echoed: string | null
}

export interface Options {
  readonly url: string
  readonly token: string
  readonly timeoutMs: number
}

export interface Send {
  /** Sent as JSON; a string is sent as it is (a body that is not JSON). */
  readonly body?: unknown
  /** `null`: no Authorization header; a string: that token instead of the right one. */
  readonly token?: string | null
}

export interface Caller {
  readonly call: (method: string, path: string, send?: Send) => Effect.Effect<Answer, Broken>
  readonly log: ReadonlyArray<Logged>
}

const short = (text: string, max = 300) => (text.length > max ? `${text.slice(0, max)}...` : text)

export const make = (options: Options): Caller => {
  const log: Array<Logged> = []
  const base = options.url.replace(/\/+$/, "")
  const call = (method: string, path: string, send: Send = {}) => {
    const requestId = crypto.randomUUID()
    const name = `${method} ${path}`
    const token = send.token === undefined ? options.token : send.token
    const headers: Record<string, string> = { [RequestIdHeader]: requestId, accept: "application/json" }
    if (token !== null) headers.authorization = `Bearer ${token}`
    let body: string | undefined
    if (send.body !== undefined) {
      headers["content-type"] = "application/json"
      body = typeof send.body === "string" ? send.body : JSON.stringify(send.body)
    }
    return Effect.tryPromise({
      try: async () => {
        const response = await fetch(`${base}${path}`, {
          method,
          headers,
          body,
          signal: AbortSignal.timeout(options.timeoutMs)
        })
        const text = await response.text()
        log.push({ call: name, sent: requestId, echoed: response.headers.get(RequestIdHeader) })
        let parsed: unknown
        try {
          parsed = text === "" ? undefined : JSON.parse(text)
        } catch {
          parsed = undefined
        }
        return { call: name, status: response.status, body: parsed, text } satisfies Answer
      },
      catch: (e) =>
        new Broken({
          detail:
            e instanceof Error && e.name === "TimeoutError"
              ? `${name}: no answer within ${options.timeoutMs} ms`
              : `${name}: no answer (${e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)})`
        })
    })
  }
  return { call, log }
}

/** What an answer was, in a few words: `POST /transfers answered 500 "..."`. */
export const seen = (answer: Answer) => `${answer.call} answered ${answer.status} ${short(answer.text)}`

/** The answer's body as `schema` reads it, after checking its status. */
export const expect = <A, I>(
  answer: Answer,
  status: number | ReadonlyArray<number>,
  schema: Schema.Schema<A, I>,
  what: string
): Effect.Effect<A, Broken> => {
  const statuses = typeof status === "number" ? [status] : status
  if (!statuses.includes(answer.status))
    return broken(`${what}: expected ${statuses.join(" or ")}, but ${seen(answer)}`)
  return Schema.decodeUnknown(schema)(answer.body).pipe(
    Effect.mapError(
      (e) =>
        new Broken({
          detail: `${what}: ${seen(answer)}, which is not the protocol's body (${short(
            ParseResult.ArrayFormatter.formatErrorSync(e)
              .map((issue) => `${issue.path.length === 0 ? "" : `${issue.path.join(".")}: `}${issue.message}`)
              .join("; "),
            400
          )})`
        })
    )
  )
}

/** Fails with `detail` unless `holds`. */
export const check = (holds: boolean, detail: () => string): Effect.Effect<void, Broken> =>
  holds ? Effect.void : broken(detail())
