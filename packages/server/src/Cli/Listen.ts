/**
 * `laari listen --forward-to <url>`: follows the merchant's events (`GET /events`) and forwards each to a
 * local URL, signed per Standard Webhooks like a real delivery, so a webhook handler can be developed on
 * a laptop without a public address. The signing secret is the one given, or a new one printed at start.
 */
import { Command, Options } from "@effect/cli"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Console, Duration, Effect, Option, Redacted } from "effect"
import * as Signing from "../Webhooks/Signing.js"
import * as Remote from "./Remote.js"

interface Envelope {
  readonly id: string
  readonly type: string
  readonly created: number
}

/** Envelopes newer than `after` (Unix seconds, exclusive), oldest first, every page of them. */
const eventsSince = (baseUrl: string, key: string, after: number | undefined) =>
  Effect.gen(function* () {
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
    const all: Array<Record<string, unknown>> = []
    for (let offset = 0; ; offset += 100) {
      const request = HttpClientRequest.get(`${baseUrl}/events`).pipe(
        HttpClientRequest.bearerToken(key),
        HttpClientRequest.setUrlParams({
          limit: "100",
          offset: String(offset),
          ...(after === undefined ? {} : { created_after: String(Math.max(0, after)) })
        })
      )
      const page = (yield* Effect.flatMap(client.execute(request), (r) => r.json)) as Array<
        Record<string, unknown>
      >
      all.push(...page)
      // Without a lower bound only the newest page is wanted: it sets where following starts.
      if (page.length < 100 || after === undefined) break
    }
    return all.reverse()
  })

/** The longest wait between polls while the service cannot be reached. */
const MaxBackoffMs = 10_000

/** The service is down or restarting (no connection, or a 5xx), as opposed to refusing the request. */
const lostConnection = (e: unknown): boolean =>
  HttpClientError.isHttpClientError(e) &&
  (e._tag === "RequestError" || (e._tag === "ResponseError" && e.response.status >= 500))

export const listen = Command.make(
  "listen",
  {
    url: Remote.url,
    key: Remote.apiKey,
    forwardTo: Options.text("forward-to").pipe(
      Options.withDescription("Where to POST each event, e.g. http://localhost:3000/webhooks")
    ),
    secret: Options.redacted("secret").pipe(
      Options.withDescription("The signing secret (whsec_...); default: a new one, printed at start"),
      Options.optional
    ),
    interval: Options.integer("interval").pipe(
      Options.withDescription("How often to look for new events, in milliseconds (default 1000)"),
      Options.withDefault(1000)
    ),
    max: Options.integer("max-events").pipe(
      Options.withDescription("Stop after forwarding this many events (default: follow until interrupted)"),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function* () {
      const { key } = yield* Remote.keyClient(o.url, o.key)
      const secret = Option.match(o.secret, { onNone: Signing.generateSecret, onSome: Redacted.value })
      const http = yield* HttpClient.HttpClient
      // Where following starts: after the newest event already recorded.
      const existing = (yield* eventsSince(o.url, key, undefined)) as unknown as ReadonlyArray<Envelope>
      let cursor = existing.reduce((max, e) => Math.max(max, e.created), 0)
      const seen = new Set(existing.map((e) => e.id))
      let forwarded = 0
      yield* Console.log(
        `Forwarding events from ${o.url} to ${o.forwardTo}` +
          (Option.isNone(o.secret) ? `\nSigning secret for this session: ${secret}` : "") +
          "\nReady. Ctrl-C stops."
      )

      const forward = (envelope: Record<string, unknown>) =>
        Effect.gen(function* () {
          const e = envelope as unknown as Envelope
          const body = JSON.stringify(envelope)
          const timestamp = Math.floor(Date.now() / 1000)
          const request = HttpClientRequest.post(o.forwardTo).pipe(
            HttpClientRequest.setHeaders(Signing.headers([secret], e.id, timestamp, body)),
            HttpClientRequest.bodyText(body, "application/json")
          )
          const status = yield* http.execute(request).pipe(
            Effect.map((r) => String(r.status)),
            Effect.timeout(Duration.seconds(15)),
            Effect.catchAll((err) =>
              Effect.succeed(`failed: ${err._tag === "TimeoutException" ? "no answer in 15 s" : err.message}`)
            )
          )
          yield* Console.log(`${new Date().toISOString()}  --> ${e.type}  ${e.id}  [${status}]`)
          forwarded += 1
        })

      const poll = Effect.gen(function* () {
        // A second's events may arrive after the second was read: look one second back, skip what was seen.
        const fresh = (yield* eventsSince(o.url, key, cursor - 1)).filter((e) => !seen.has(String(e.id)))
        for (const envelope of fresh) {
          if (Option.isSome(o.max) && forwarded >= o.max.value) break
          seen.add(String(envelope.id))
          cursor = Math.max(cursor, Number(envelope.created))
          yield* forward(envelope)
        }
      })
      const every = Math.max(100, o.interval)
      // A service that restarts or is briefly down is waited for: polls back off (doubling, at most
      // `MaxBackoffMs`) until it answers again; `seen` and `cursor` carry over, so nothing is sent twice.
      let failures = 0
      const step = Effect.gen(function* () {
        const outcome = yield* Effect.either(poll)
        if (outcome._tag === "Right") {
          if (failures > 0)
            yield* Console.log(`${new Date().toISOString()}  Connection to ${o.url} regained.`)
          failures = 0
          return every
        }
        if (!lostConnection(outcome.left)) return yield* Effect.fail(outcome.left)
        if (failures === 0)
          yield* Console.log(`${new Date().toISOString()}  Lost the connection to ${o.url}; retrying.`)
        failures += 1
        return Math.min(MaxBackoffMs, every * 2 ** failures)
      })
      while (!(Option.isSome(o.max) && forwarded >= o.max.value)) {
        const wait = yield* step
        if (Option.isSome(o.max) && forwarded >= o.max.value) break
        yield* Effect.sleep(Duration.millis(wait))
      }
    }).pipe(Remote.report(o.url))
).pipe(
  Command.withDescription(
    "Follow the merchant's events and forward each to a local URL, signed like a real webhook delivery"
  )
)
