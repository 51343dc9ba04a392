/**
 * A laari webhook receiver: verifies each delivery with `standardwebhooks` (signature and a 5-minute
 * timestamp tolerance), drops a delivery whose `webhook-id` it has already handled (retries and resends
 * carry the same id), and hands each new event to `onEvent`. Answers `2xx` only for what it accepted,
 * so laari retries anything else.
 */
import http from "node:http"
import { Webhook } from "standardwebhooks"

export interface Event {
  readonly id: string
  readonly type: string
  readonly created: number
  readonly livemode: boolean
  readonly sequence: number
  readonly data: { readonly object: Record<string, unknown> }
}

export interface Options {
  /** The endpoint's `whsec_` secret; during a rotation, both (either signature is accepted). */
  readonly secrets: ReadonlyArray<string>
  readonly onEvent: (event: Event) => void
  /** Told about every delivery that was refused or dropped. */
  readonly onSkip?: (reason: string, id: string | undefined) => void
  /** How many ids to remember for deduplication. */
  readonly remember?: number
}

const MaxBody = 1024 * 1024

export const createReceiver = (options: Options): http.Server => {
  const verifiers = options.secrets.map((s) => new Webhook(s))
  const seen = new Set<string>()
  const remember = options.remember ?? 10_000
  const skip = options.onSkip ?? (() => {})

  return http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MaxBody) req.destroy()
      else chunks.push(chunk)
    })
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const headers = {
        "webhook-id": String(req.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(req.headers["webhook-signature"] ?? "")
      }
      let event: Event | undefined
      for (const verifier of verifiers) {
        try {
          event = verifier.verify(body, headers) as Event
          break
        } catch {
          // try the next secret
        }
      }
      if (event === undefined) {
        skip("signature", headers["webhook-id"] || undefined)
        res.writeHead(400).end("invalid signature")
        return
      }
      if (seen.has(headers["webhook-id"])) {
        skip("duplicate", headers["webhook-id"])
        res.writeHead(200).end("duplicate")
        return
      }
      seen.add(headers["webhook-id"])
      if (seen.size > remember) seen.delete(seen.values().next().value!)
      options.onEvent(event)
      res.writeHead(204).end()
    })
  })
}
