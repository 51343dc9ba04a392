/**
 * The wallet connector's configuration from the environment: where the provider's core is, its token,
 * which environments move money there, and how long laari waits. `LAARI_WALLET_URL` unset: the built-in
 * ledger, and the connector is off. A bad value fails the start in one line naming the variable and what
 * it may be, as `Platform/Config` does.
 */
import type { Ids } from "@laari/core"
import { Config as C, ConfigError, Effect, Either, Option, Redacted } from "effect"
import { isHttpUrl } from "./Urls.js"

export interface WalletConnectorConfig {
  /** `LAARI_WALLET_URL`: the core's base URL, without a trailing slash. */
  readonly url: string
  /** `LAARI_WALLET_TOKEN`: the bearer token the provider gave; required with a URL. */
  readonly token: Redacted.Redacted<string>
  /** `LAARI_WALLET_ENVIRONMENTS`: whose money moves in the core (`live` by default; `test,live`). */
  readonly environments: ReadonlyArray<Ids.Environment>
  /** `LAARI_WALLET_TIMEOUT_MS`: the most one call may take (5000 by default). */
  readonly timeoutMs: number
  /** `LAARI_WALLET_CANCEL_AFTER_S`: how long a transfer's outcome may stay unknown before laari cancels it. */
  readonly cancelAfterS: number
  /** `LAARI_WALLET_FEE_WALLET`: the core's wallet that receives laari's fees (`laari-fees` by default). */
  readonly feeWallet: string
}

export const defaults = {
  environments: ["live"] as ReadonlyArray<Ids.Environment>,
  timeoutMs: 5000,
  cancelAfterS: 60,
  feeWallet: "laari-fees"
} as const

export const TimeoutBounds = { min: 100, max: 60_000 } as const
export const CancelAfterBounds = { min: 1, max: 3600 } as const

/** A whole number from `min` to `max`, refused with `message` otherwise (text, a fraction, out of range). */
const wholeFrom = (name: string, bounds: { readonly min: number; readonly max: number }, message: string) =>
  C.string(name).pipe(
    C.mapOrFail((text) => {
      const n = /^\s*\d+\s*$/.test(text) ? Number(text) : Number.NaN
      return n >= bounds.min && n <= bounds.max
        ? Either.right(n)
        : Either.left(ConfigError.InvalidData([], message))
    })
  )

const Environments = ["test", "live"] as const

/** `live`, `test` or both, comma-separated, each once. */
const environments = C.string("LAARI_WALLET_ENVIRONMENTS").pipe(
  C.mapOrFail((text) => {
    const names = text.split(",").map((s) => s.trim())
    const known = names.every((n): n is Ids.Environment =>
      (Environments as ReadonlyArray<string>).includes(n)
    )
    return known && names.length > 0 && new Set(names).size === names.length
      ? Either.right(Environments.filter((e) => names.includes(e)))
      : Either.left(ConfigError.InvalidData([], "must be live, test, or test,live"))
  })
)

// Validated as text and made `Redacted` after: a check after a `map` loses the variable's name in its refusal.
const token = C.string("LAARI_WALLET_TOKEN").pipe(
  C.validate({
    message: "must be the bearer token the wallet provider gave: visible ASCII characters, no spaces",
    validation: (t) => /^[\x21-\x7e]+$/.test(t)
  }),
  C.map(Redacted.make)
)

/** The connector's configuration, or `undefined` when `LAARI_WALLET_URL` is unset (the built-in ledger). */
export const fromEnv: Effect.Effect<WalletConnectorConfig | undefined, ConfigError.ConfigError> = Effect.gen(
  function* () {
    const url = yield* C.option(
      C.nonEmptyString("LAARI_WALLET_URL").pipe(
        C.validate({ message: "must be an http:// or https:// URL", validation: isHttpUrl })
      )
    )
    // Every value is checked whether or not the connector is on: a typo fails now, not when it is turned on.
    const rest = {
      environments: yield* environments.pipe(C.withDefault(defaults.environments)),
      timeoutMs: yield* wholeFrom(
        "LAARI_WALLET_TIMEOUT_MS",
        TimeoutBounds,
        `must be a whole number of milliseconds from ${TimeoutBounds.min} to ${TimeoutBounds.max}`
      ).pipe(C.withDefault(defaults.timeoutMs)),
      cancelAfterS: yield* wholeFrom(
        "LAARI_WALLET_CANCEL_AFTER_S",
        CancelAfterBounds,
        `must be a whole number of seconds from ${CancelAfterBounds.min} to ${CancelAfterBounds.max}`
      ).pipe(C.withDefault(defaults.cancelAfterS)),
      feeWallet: yield* C.string("LAARI_WALLET_FEE_WALLET").pipe(
        C.validate({
          message: "must be the core's wallet id for laari's fees: 1 to 255 visible characters",
          validation: (t) => /^[\x21-\x7e]{1,255}$/.test(t)
        }),
        C.withDefault(defaults.feeWallet)
      )
    }
    if (Option.isNone(url)) return undefined
    const bearer = yield* C.option(token)
    if (Option.isNone(bearer))
      return yield* Effect.fail(
        ConfigError.MissingData(
          ["LAARI_WALLET_TOKEN"],
          "required when LAARI_WALLET_URL is set: the bearer token the wallet provider gave"
        )
      )
    return { url: url.value.replace(/\/+$/, ""), token: bearer.value, ...rest }
  }
)
