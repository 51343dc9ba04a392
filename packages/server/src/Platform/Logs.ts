/**
 * How the standalone service writes its logs: Effect's default text lines, or with
 * `LAARI_LOG_FORMAT=json` one JSON object a line (`time`, `level`, `message`, then the annotations:
 * `request_id` while a request is served, `merchant_id` once its key is known; `cause` when there is one), for a log shipper
 * to read without parsing text. In JSON mode every line on stdout is such an object, the supervisor's
 * own lines too (`line`).
 *
 * The access log: one line per request answered (`method`, `route` template, `status`, `duration_ms`,
 * with the request's annotations), on in the standalone service unless `LAARI_ACCESS_LOG=false`.
 *
 * Either format is written a chunk per turn of the event loop (`Lines`), not a system call a line.
 */
import { Cause, Config as C, Context, Effect, FiberRef, HashMap, HashSet, Layer, Logger } from "effect"
import * as Lines from "./Lines.js"

export type Format = "text" | "json"

export const formatFromEnv = C.literal(
  "text",
  "json"
)("LAARI_LOG_FORMAT").pipe(C.withDefault("text" as const))

/** A log line's message as text: several parts are joined by spaces, anything not a string as JSON. */
const text = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((part) => (typeof part === "string" ? part : JSON.stringify(part))).join(" ")
}

/** The JSON object of one log line. */
const entry = (options: Logger.Logger.Options<unknown>): Record<string, unknown> => {
  const line: Record<string, unknown> = {
    time: options.date.toISOString(),
    level: options.logLevel.label.toLowerCase(),
    message: text(options.message)
  }
  for (const [key, value] of HashMap.toEntries(options.annotations)) if (!(key in line)) line[key] = value
  if (!Cause.isEmpty(options.cause)) line.cause = Cause.pretty(options.cause)
  return line
}

/**
 * A line of `format`: Effect's own text line, or the JSON object. Stamped with the wall time: Effect
 * dates a line by the fiber's clock, which with `LAARI_CLOCK=manual` is the service's, standing still or
 * a month ahead; a log is read against the machine's time and the other services' logs.
 */
const formatted = (format: Format, logged: Logger.Logger.Options<unknown>): string => {
  const options = { ...logged, date: new Date() }
  return format === "json" ? JSON.stringify(entry(options)) : Logger.stringLogger.log(options)
}

/**
 * The logger for `format`, writing to `lines` (this process's stdout), in place of Effect's default and
 * of the pretty logger `runMain` adds (which would write every line a second time, unbatched).
 */
export const layer = (format: Format, lines: Lines.Lines = Lines.stdout()): Layer.Layer<never> => {
  const logger = Logger.make((options) => lines.write(formatted(format, options)))
  // One change of the loggers (two merged layers would join theirs back into the caller's fiber).
  return Layer.scopedDiscard(
    Effect.locallyScopedWith(FiberRef.currentLoggers, (loggers) =>
      HashSet.add(
        HashSet.remove(HashSet.remove(loggers, Logger.defaultLogger), Logger.prettyLoggerDefault),
        logger
      )
    )
  )
}

/**
 * A line of the service's own written outside Effect's loggers (the supervisor of several processes,
 * start-up notes): as is in text, the object a log line is in JSON.
 */
export const line = (format: Format, message: string, level: "info" | "warn" | "error" = "info"): string =>
  format === "json" ? JSON.stringify({ time: new Date().toISOString(), level, message }) : message

export const accessLogFromEnv = C.boolean("LAARI_ACCESS_LOG").pipe(C.withDefault(true))

/**
 * Whether each request is logged. Off unless provided: servers embedded in tests stay quiet, and the
 * standalone service (`Serve.ts`) sets it from `LAARI_ACCESS_LOG`.
 */
export class AccessLog extends Context.Reference<AccessLog>()("laari/server/AccessLog", {
  defaultValue: () => false
}) {}
