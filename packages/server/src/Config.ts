/**
 * Configuration from the environment (DESIGN section 8).
 */
import { Config as C, type ConfigError, Context, Effect, Layer, Option } from "effect"

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
}

export class ServerConfigTag extends Context.Tag("laari/server/Config")<ServerConfigTag, ServerConfig>() {}

const stripSlash = (s: string) => s.replace(/\/+$/, "")

export const fromEnv: Effect.Effect<ServerConfig, ConfigError.ConfigError> = Effect.gen(function* () {
  const port = yield* C.integer("PORT").pipe(C.withDefault(4000))
  const baseUrl = yield* C.string("LAARI_BASE_URL").pipe(C.withDefault(`http://localhost:${port}`))
  return {
    port,
    databaseUrl: Option.getOrUndefined(yield* C.option(C.nonEmptyString("DATABASE_URL"))),
    dataDir: yield* C.string("LAARI_DATA_DIR").pipe(C.withDefault("./.data")),
    baseUrl: stripSlash(baseUrl),
    checkoutUrl: stripSlash(yield* C.string("LAARI_CHECKOUT_URL").pipe(C.withDefault(baseUrl))),
    opsToken: Option.getOrUndefined(yield* C.option(C.nonEmptyString("LAARI_OPS_TOKEN"))),
    clock: yield* C.literal("system", "manual")("LAARI_CLOCK").pipe(C.withDefault("system" as const))
  }
})

export const layer = (config: ServerConfig) => Layer.succeed(ServerConfigTag, config)
