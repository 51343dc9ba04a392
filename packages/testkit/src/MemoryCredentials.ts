/**
 * Core's `Credentials` for tests: honest about what it checks, cheap about how. NOT for production.
 *
 * - A password's "hash" is `plain:<password>`, compared in constant time; `verifyPassword(undefined, ...)`
 *   compares against a hash no password makes, so it answers `false` the same way.
 * - `passwordProblem`: fewer than 12 characters, one of `CommonPasswords`, or containing the email's
 *   local part.
 * - A TOTP secret is 16 random base32 characters, "sealed" as `sealed:<secret>`. The code of step `s`
 *   (`floor(unix seconds / 30)`) is `(s + weight(secret)) mod 1,000,000`, six digits (`codeOf`): not
 *   RFC 6238, but a code of one secret is not another's, and a test computes it without a library.
 *   `totpStep` accepts the steps before, at and after now, as the real one does.
 * - Tokens are 32 random bytes in hex; a digest is HMAC-SHA-256 under a fixed key (core `Crypto`).
 * - Recovery codes are `xxxx-xxxx-xxxx` of random hex.
 */
import { Credentials, Crypto, Person } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"

/** The passwords `passwordProblem` refuses as common (12 characters and more, so the length passes). */
export const CommonPasswords: ReadonlyArray<string> = ["password1234", "123456789012", "qwertyuiopas"]

const HashPrefix = "plain:"
const SealPrefix = "sealed:"
const DigestKey = new TextEncoder().encode("memory-credentials-digest-key")
const Base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

/** What the fake's step rule adds to a step for `secret`. */
const weight = (secret: string): number => {
  let w = 0
  for (let i = 0; i < secret.length; i++) w = (w * 31 + secret.charCodeAt(i)) % 1_000_000
  return w
}

/** The code of `secret` at TOTP step `step`. */
export const codeOf = (secret: string, step: number): string =>
  String((step + weight(secret)) % 1_000_000).padStart(6, "0")

/** The TOTP step of the instant. */
export const stepAt = (at: DateTime.Utc): number =>
  Math.floor(DateTime.toEpochMillis(at) / 1000 / Person.TotpStepSeconds)

/** The code of `secret` at the instant. */
export const codeAt = (secret: string, at: DateTime.Utc): string => codeOf(secret, stepAt(at))

/** The secret inside a sealed one, or `undefined` for text this fake did not seal. */
export const unseal = (sealed: string): string | undefined =>
  sealed.startsWith(SealPrefix) ? sealed.slice(SealPrefix.length) : undefined

const randomHex = (n: number) => Effect.map(Crypto.web.bytes(n), Crypto.hex)

export const make: Credentials.CredentialsService = {
  passwordProblem: (password, email) => {
    if (password.length < 12) return "Use at least 12 characters."
    if (CommonPasswords.includes(password.toLowerCase())) return "That password is too common."
    const local = Person.normalEmail(email).split("@")[0] ?? ""
    if (local.length > 0 && password.toLowerCase().includes(local)) return "Do not use your email address."
    return undefined
  },
  hashPassword: (password) => Effect.succeed(`${HashPrefix}${password}`),
  verifyPassword: (hash, password) =>
    Effect.sync(() => Crypto.constantTimeEqual(hash ?? "-", `${HashPrefix}${password}`)),
  oneTimePassword: Effect.map(randomHex(9), (hex) => `otp-${hex}`),
  newTotpSecret: Effect.map(Crypto.web.bytes(16), (bytes) => {
    const secret = Array.from(bytes, (b) => Base32[b % 32]).join("")
    return { secret, sealed: `${SealPrefix}${secret}` }
  }),
  totpUri: (secret, email, issuer) =>
    `otpauth://totp/${encodeURIComponent(`${issuer}:${email}`)}?secret=${secret}&issuer=${encodeURIComponent(issuer)}`,
  totpStep: (sealed, code, now) =>
    Effect.sync(() => {
      const secret = unseal(sealed)
      if (secret === undefined) return undefined
      const at = stepAt(now)
      return [at - 1, at, at + 1].find((step) => codeOf(secret, step) === code)
    }),
  newToken: randomHex(32),
  digest: (secret) => Crypto.web.hmacSha256(DigestKey, secret),
  newRecoveryCodes: Effect.forEach(Array.from({ length: Person.RecoveryCodeCount }), () =>
    Effect.map(randomHex(6), (hex) => `${hex.slice(0, 4)}-${hex.slice(4, 8)}-${hex.slice(8, 12)}`)
  )
}

export const layer: Layer.Layer<Credentials.Credentials> = Layer.succeed(Credentials.Credentials, make)
