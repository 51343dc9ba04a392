/**
 * The master key's format and its setting (`LAARI_MASTER_KEY`, `LAARI_MASTER_KEY_PREVIOUS`): 32 bytes, as 64 hex
 * digits or base64. What it seals is `Webhooks/Secrets`'s.
 */
import { Config, ConfigError, Either, Option, Redacted } from "effect"

export const KeyBytes = 32

/** A master key from its text: 32 bytes, as 64 hex digits or base64 (either alphabet); else `undefined`. */
export const parseKey = (text: string): Uint8Array | undefined => {
  const t = text.trim()
  const bytes = /^[0-9a-fA-F]{64}$/.test(t)
    ? Buffer.from(t, "hex")
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(t)
      ? Buffer.from(t.replace(/-/g, "+").replace(/_/g, "/"), "base64")
      : undefined
  return bytes?.length === KeyBytes ? new Uint8Array(bytes) : undefined
}

/** `name` as a master key, kept redacted; a value that is not one fails the start with a one-line error. */
export const masterKeyConfig = (name: string): Config.Config<Redacted.Redacted<Uint8Array> | undefined> =>
  Config.option(
    Config.redacted(name).pipe(
      Config.mapOrFail((text) => {
        const bytes = parseKey(Redacted.value(text))
        return bytes === undefined
          ? Either.left(ConfigError.InvalidData([name], "must be 32 bytes, as base64 or as 64 hex digits"))
          : Either.right(Redacted.make(bytes))
      })
    )
  ).pipe(Config.map(Option.getOrUndefined))
