/**
 * The master keys that seal the endpoints' signing secrets, as core's `SecretSealer` (`Secrets` seals and
 * opens; the endpoints are core's `WebhookEndpoints`, stored by `Sql/WebhookEndpoints`). Building it seals
 * again, under the current master key, whatever a start finds sealed otherwise.
 */
import { SecretSealer } from "@laari/core"
import { Effect, Layer, Redacted } from "effect"
import { type ServerConfig, ServerConfigTag } from "../Platform/Config.js"
import * as ServerSecrets from "../Sql/ServerSecrets.js"
import * as SqlEndpoints from "../Sql/WebhookEndpoints.js"
import * as Secrets from "./Secrets.js"

/** The name in `server_secrets` of the master key made when `LAARI_MASTER_KEY` is not set. */
export const KeptKeyName = "webhook-secrets-key"

/** The keys: `LAARI_MASTER_KEY` (else the kept one, made now if need be), the previous one, the kept one. */
const keyring = (config: ServerConfig) =>
  Effect.gen(function* () {
    const configured = config.masterKey === undefined ? undefined : Redacted.value(config.masterKey)
    const kept =
      configured === undefined
        ? yield* ServerSecrets.ofContext.ensure(KeptKeyName)
        : yield* ServerSecrets.ofContext.read(KeptKeyName)
    const current = Secrets.key(configured ?? kept!)
    const older = [config.masterKeyPrevious && Redacted.value(config.masterKeyPrevious), kept]
      .filter((bytes): bytes is Uint8Array => bytes !== undefined)
      .map(Secrets.key)
      .filter((k) => k.id !== current.id)
    return { current, older } satisfies Secrets.Keyring
  })

const makeSealer = Effect.gen(function* () {
  const ring = yield* keyring(yield* ServerConfigTag)

  /**
   * Seals again every secret not under the current key: plaintext ones from before sealing, and those
   * under a previous master key. One row per statement, both secrets together, and only if the row is
   * still as read (a rotation in between wins; the next start seals what it wrote, already current).
   */
  const reseal = Effect.gen(function* () {
    const rows = yield* SqlEndpoints.secretsNotLike(`v1:${ring.current.id}:%`)
    let sealed = 0
    for (const row of rows) {
      const again = (stored: string) =>
        Secrets.isCurrent(ring, stored)
          ? stored
          : Secrets.seal(ring, row.id, Secrets.open(ring, row.id, stored))
      const secret = yield* Effect.try({
        try: () => again(row.secret),
        catch: (e) => e as Secrets.SecretUnreadable
      })
      const previous =
        row.previous_secret === null
          ? null
          : yield* Effect.try({
              try: () => again(row.previous_secret!),
              catch: (e) => e as Secrets.SecretUnreadable
            })
      if (yield* SqlEndpoints.storeResealed(row, secret, previous)) sealed += 1
    }
    return sealed
  })

  return {
    /**
     * Core's `SecretSealer` for the endpoints' signing secrets: AES-256-GCM under the current master key;
     * opens under any key of the ring. A secret that does not open is a defect (a key missing: `Secrets`).
     */
    sealer: {
      seal: (endpointId, secret) => Effect.sync(() => Secrets.seal(ring, endpointId, secret)),
      open: (endpointId, sealed) => Effect.sync(() => Secrets.open(ring, endpointId, sealed))
    } satisfies SecretSealer.SecretSealerService,
    reseal
  }
})

/**
 * The sealer; building it seals what is not sealed under the current master key, so every process starts
 * with every row readable, and refuses to start, saying which key is missing, when one is not.
 */
export const layer = Layer.effect(
  SecretSealer.SecretSealer,
  Effect.gen(function* () {
    const { sealer, reseal } = yield* makeSealer
    const sealed = yield* reseal.pipe(
      Effect.catchTag("SecretUnreadable", (e) => Effect.dieMessage(`laari: ${e.message}`))
    )
    if (sealed > 0)
      yield* Effect.logInfo(`sealed ${sealed} webhook endpoints' signing secrets under the master key`)
    return sealer
  })
)
