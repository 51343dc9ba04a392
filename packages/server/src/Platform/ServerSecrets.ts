/**
 * Secrets a deployment makes for itself (the pages' CSRF key, ...), shared by every process: the port
 * through which a front end gets one without naming where they are kept (`Sql/ServerSecrets`, the
 * `server_secrets` table).
 */
import type { Errors } from "@laari/core"
import { Context, type Effect } from "effect"

export interface ServerSecretsService {
  /** The secret `name` (32 random bytes), made first if there is none; two processes racing keep the first. */
  readonly ensure: (name: string) => Effect.Effect<Uint8Array, Errors.ServiceUnavailable>
}

export class ServerSecrets extends Context.Tag("laari/server/ServerSecrets")<
  ServerSecrets,
  ServerSecretsService
>() {}
