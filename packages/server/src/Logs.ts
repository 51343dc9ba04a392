/**
 * How the standalone service writes its logs: Effect's default text lines, or with
 * `LAARI_LOG_FORMAT=json` one JSON object a line (`time`, `level`, `message`, then the annotations:
 * `request_id` while a request is served, `merchant_id` once its key is known; `cause` when there is one), for a log shipper
 * to read without parsing text.
 */
import { Cause, Config as C, HashMap, Layer, Logger } from "effect"

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

export const jsonLogger = Logger.make<unknown, void>((options) => {
  globalThis.console.log(JSON.stringify(entry(options)))
})

/** The logger for `format`, replacing Effect's default. */
export const layer = (format: Format): Layer.Layer<never> =>
  format === "json" ? Logger.replace(Logger.defaultLogger, jsonLogger) : Layer.empty
