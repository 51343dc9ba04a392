/**
 * The host's sealing of webhook signing secrets: they must be read back to sign, so they are encrypted,
 * not hashed, and the store never sees one in the clear.
 */
import { Context, Effect } from "effect"

/**
 * Seals a signing secret for one endpoint (its id bound in, so a sealed secret copied to another endpoint
 * does not open there) and opens it again. A secret that does not open is a defect: a key is missing.
 */
export interface SecretSealerService {
  readonly seal: (endpointId: string, secret: string) => Effect.Effect<string>
  readonly open: (endpointId: string, sealed: string) => Effect.Effect<string>
}
export class SecretSealer extends Context.Tag("laari/WebhookEndpoints/SecretSealer")<
  SecretSealer,
  SecretSealerService
>() {}

/** Keeps secrets as they are: for stores in memory, which hold nothing at rest. */
export const plainSealer: SecretSealerService = {
  seal: (_, secret) => Effect.succeed(secret),
  open: (_, sealed) => Effect.succeed(sealed)
}
