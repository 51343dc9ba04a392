/**
 * The host's HTTP client for what laari posts out: webhook deliveries and notices, one attempt each.
 */
import { Context, type Effect } from "effect"
import type { Response } from "./Webhook.js"

/** One attempt's `POST`: the envelope's exact text, signed. */
export interface Request {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

/**
 * Makes one attempt over HTTP, within `Webhook.AttemptTimeout`, keeping `Webhook.LoggedBodyBytes` of the
 * answer; never fails, every failure is a `Response` (with its `error`). Which addresses may be called
 * is the host's rule, as it depends on its network.
 */
export interface SenderService {
  readonly send: (request: Request) => Effect.Effect<Response>
}
export class Sender extends Context.Tag("laari/WebhookDeliveries/Sender")<Sender, SenderService>() {}
