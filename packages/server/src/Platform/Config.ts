/**
 * Configuration from the environment.
 */
import * as WalletConnector from "./WalletConnectorConfig.js"
import { isHttpUrl } from "./Urls.js"
import { Config as C, type ConfigError, Context, Effect, Layer, Option, Redacted } from "effect"
import * as MasterKey from "./MasterKey.js"

export interface ServerConfig {
  readonly port: number
  /** Unset: embedded PGlite in `dataDir`. */
  readonly databaseUrl: string | undefined
  /** Where PGlite keeps its files; `undefined` keeps them in memory (tests). */
  readonly dataDir: string | undefined
  readonly baseUrl: string
  readonly checkoutUrl: string
  /** Unset: generated at start and printed. */
  readonly opsToken: string | undefined
  readonly clock: "system" | "manual"
  /**
   * `LAARI_DEVELOPMENT=true`: a developer's start. Customers' current one-time codes are readable over
   * the operator API (`laari customers codes`); never set in production.
   */
  readonly development?: boolean | undefined
  /** Largest request body accepted, in bytes (`LAARI_MAX_BODY_BYTES`, default 1 MiB); over it `413`. */
  readonly maxBodyBytes: number
  /** Requests per second per API key (`LAARI_RATE_LIMIT`, default 100); `0` turns rate limiting off. */
  readonly rateLimit: number
  /** `LAARI_WEBHOOK_ALLOW_PRIVATE=true`: live endpoints may be private addresses (tests, private networks). */
  readonly webhookAllowPrivate: boolean
  /**
   * `LAARI_NOTIFY_URL`: the wallet provider's notification service; every customer notice is POSTed
   * there, signed (`Notify`). Unset: notices stay in laari (the wallet page).
   */
  readonly notifyUrl?: string | undefined
  /** `LAARI_NOTIFY_SECRET` (`whsec_...`) signs them; unset, one is generated and kept in the database. */
  readonly notifySecret?: string | undefined
  /**
   * `LAARI_MASTER_KEY`: 32 bytes (base64 or hex) sealing the webhook signing secrets at rest; unset, a key
   * made once and kept in the database (`Webhooks/Secrets`).
   */
  readonly masterKey?: Redacted.Redacted<Uint8Array> | undefined
  /** `LAARI_MASTER_KEY_PREVIOUS`: the master key before a rotation; what it sealed is sealed again at start. */
  readonly masterKeyPrevious?: Redacted.Redacted<Uint8Array> | undefined
  /** `LAARI_WALLET_URL` and the rest: the wallet provider's core; unset, the built-in ledger. */
  readonly walletConnector?: WalletConnector.WalletConnectorConfig | undefined
}

export const defaults = {
  dataDir: "./.data",
  maxBodyBytes: 1024 * 1024,
  rateLimit: 100
} as const

export class ServerConfigTag extends Context.Tag("laari/server/Config")<ServerConfigTag, ServerConfig>() {}

const stripSlash = (s: string) => s.replace(/\/+$/, "")

export { isHttpUrl }

/** A Standard Webhooks secret: `whsec_` and base64 of enough bytes for HMAC-SHA256. */
const isSigningSecret = (s: string): boolean =>
  /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s) && Buffer.from(s.slice(6), "base64").length >= 24

export const fromEnv: Effect.Effect<ServerConfig, ConfigError.ConfigError> = Effect.gen(function* () {
  const port = yield* C.integer("PORT").pipe(C.withDefault(4000))
  const baseUrl = yield* C.string("LAARI_BASE_URL").pipe(C.withDefault(`http://localhost:${port}`))
  return {
    port,
    databaseUrl: Option.getOrUndefined(yield* C.option(C.nonEmptyString("DATABASE_URL"))),
    dataDir: yield* C.string("LAARI_DATA_DIR").pipe(C.withDefault(defaults.dataDir)),
    baseUrl: stripSlash(baseUrl),
    checkoutUrl: stripSlash(yield* C.string("LAARI_CHECKOUT_URL").pipe(C.withDefault(baseUrl))),
    opsToken: Option.getOrUndefined(yield* C.option(C.nonEmptyString("LAARI_OPS_TOKEN"))),
    clock: yield* C.literal("system", "manual")("LAARI_CLOCK").pipe(C.withDefault("system" as const)),
    development: yield* C.boolean("LAARI_DEVELOPMENT").pipe(C.withDefault(false)),
    maxBodyBytes: yield* C.integer("LAARI_MAX_BODY_BYTES").pipe(
      C.validate({ message: "must be a positive number of bytes", validation: (n) => n > 0 }),
      C.withDefault(defaults.maxBodyBytes)
    ),
    rateLimit: yield* C.integer("LAARI_RATE_LIMIT").pipe(
      C.validate({ message: "must be 0 (off) or more requests per second", validation: (n) => n >= 0 }),
      C.withDefault(defaults.rateLimit)
    ),
    webhookAllowPrivate: yield* C.boolean("LAARI_WEBHOOK_ALLOW_PRIVATE").pipe(C.withDefault(false)),
    masterKey: yield* MasterKey.masterKeyConfig("LAARI_MASTER_KEY"),
    masterKeyPrevious: yield* MasterKey.masterKeyConfig("LAARI_MASTER_KEY_PREVIOUS"),
    notifyUrl: Option.getOrUndefined(
      yield* C.option(
        C.nonEmptyString("LAARI_NOTIFY_URL").pipe(
          C.validate({ message: "must be an http:// or https:// URL", validation: isHttpUrl })
        )
      )
    ),
    walletConnector: yield* WalletConnector.fromEnv,
    notifySecret: Option.getOrUndefined(
      yield* C.option(
        C.redacted("LAARI_NOTIFY_SECRET").pipe(
          C.map(Redacted.value),
          C.validate({
            message: "must be whsec_ followed by the base64 of at least 24 bytes",
            validation: isSigningSecret
          })
        )
      )
    )
  }
})

/**
 * Whether the operator API shows customers' one-time codes: only on a developer's start, flagged
 * (`LAARI_DEVELOPMENT`) or implied by a manual clock, which no production service runs.
 */
export const codesVisible = (config: Pick<ServerConfig, "development" | "clock">): boolean =>
  config.development === true || config.clock === "manual"

export const layer = (config: ServerConfig) => Layer.succeed(ServerConfigTag, config)
