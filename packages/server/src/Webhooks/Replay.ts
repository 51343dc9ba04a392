/**
 * Idempotent replays of the responses that show a signing secret (`POST /webhook-endpoints`,
 * `rotate-secret`). The idempotency table keeps the secret's fingerprint in its place
 * (`Secrets.fingerprint`), never the secret. A replay reads the endpoint's secrets, opened, and puts back
 * the one with that fingerprint: the answer is byte for byte the first one as long as
 * the secret still signs. Once it no longer does (rotated out, the endpoint deleted) the replay leaves the
 * field out rather than hand back a secret that was replaced, or one that is not the first answer's.
 */
import type { Errors, Webhook } from "@laari/core"
import { Effect } from "effect"
import type { Concealed } from "../Http/Idempotent.js"
import * as Secrets from "./Secrets.js"

type Body = Record<string, unknown>

/**
 * `secretsOf` reads the secrets of the endpoint the response is about, `idOf` names it from the body
 * (the created endpoint's `id`) or from the request (the path of `rotate-secret`).
 */
export const concealed = (
  idOf: (body: Body) => unknown,
  secretsOf: (id: string) => Effect.Effect<Webhook.Secrets | undefined, Errors.ServiceUnavailable>
): Concealed => ({
  store: (body) => {
    const b = body as Body
    return typeof b.secret === "string" ? { ...b, secret: Secrets.fingerprint(b.secret) } : b
  },
  replay: (stored) =>
    Effect.gen(function* () {
      const body = JSON.parse(stored) as Body
      const id = idOf(body)
      if (typeof body.secret !== "string" || !body.secret.startsWith("sha256:") || typeof id !== "string")
        return stored
      const secrets = yield* secretsOf(id)
      const secret = [secrets?.secret, secrets?.previousSecret].find(
        (s) => typeof s === "string" && Secrets.fingerprint(s) === body.secret
      )
      if (secret === undefined) delete body.secret
      else body.secret = secret
      return JSON.stringify(body)
    })
})
