/** A `Sender` for the delivery tests: it answers one status, and keeps every request it was given. */
import { Sender } from "@laari/core"
import { Effect } from "effect"

/** A sender answering `status` (or nothing: `null`), keeping every request. */
export const sending = (status: number | null) => {
  const sent: Array<Sender.Request> = []
  const sender: Sender.SenderService = {
    send: (request) =>
      Effect.sync(() => {
        sent.push(request)
        return {
          status,
          body: status === null ? null : "ok",
          error: status === null ? "connection refused" : status < 300 ? null : `HTTP ${status}`,
          durationMs: 7
        }
      })
  }
  return { sent, provide: Effect.provideService(Sender.Sender, sender) }
}

export type Sending = ReturnType<typeof sending>
