/**
 * People's secrets for sign-in, for real (core's `Credentials` port):
 *
 * - passwords under argon2id (`@node-rs/argon2`) at OWASP's parameters, m = 19456 KiB, t = 2, p = 1:
 *   one hash or check costs about 8 ms on a 2-core build box, cheap for a sign-in and dear for a guesser;
 *   an unknown account is checked against a dummy hash made at start, so it takes as long;
 * - a password refused when shorter than 12 characters, in the common-password list (`CommonPasswords`)
 *   or made of the email's local part;
 * - TOTP (RFC 6238: SHA-1, 6 digits, 30-second steps, via `otpauth`), its secret sealed under the
 *   deployment's master key by the webhook secrets' sealer (`Webhooks/Sealer`: AES-256-GCM), bound to a
 *   context of its own so a sealed TOTP secret does not open as an endpoint's;
 * - session and link tokens (32 random bytes) and recovery codes, stored only as their HMAC-SHA-256
 *   under a server secret kept in the database (`people_digest`), shared by every process.
 */
import { Credentials, Person, SecretSealer } from "@laari/core"
import { type Algorithm, hash as argonHash, hashSync, verify as argonVerify } from "@node-rs/argon2"
import { createHmac, randomBytes, randomInt } from "node:crypto"
import { DateTime, Effect, Layer } from "effect"
import * as OTPAuth from "otpauth"
import { ServerSecrets } from "../Platform/ServerSecrets.js"
import * as CommonPasswords from "./CommonPasswords.js"

/** OWASP's argon2id: 19 MiB, two passes, one lane (`Algorithm.Argon2id` is 2; a const enum). */
export const ArgonOptions = {
  algorithm: 2 as Algorithm,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1
} as const

export const MinimumLength = 12

/** What the sign-up and password pages show for each refusal. */
export const Problems = {
  short: `Use at least ${MinimumLength} characters.`,
  common: "That password is too common. Choose another.",
  email: "Do not use your email address in your password."
} as const

/**
 * Why `password` may not be used, or `undefined`. Lengths count characters (code points), not UTF-16
 * units; a local part shorter than 3 characters is not looked for inside the password (it would refuse
 * too much), only as the whole of it.
 */
export const passwordProblem = (password: string, email: string): string | undefined => {
  if ([...password].length < MinimumLength) return Problems.short
  if (CommonPasswords.has(password)) return Problems.common
  const lowered = password.toLowerCase()
  const address = Person.normalEmail(email)
  const local = address.split("@")[0] ?? ""
  if (lowered === address || lowered === local || (local.length >= 3 && lowered.includes(local)))
    return Problems.email
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// TOTP

export const TotpDigits = 6
export const TotpSecretBytes = 20

/** What a sealed TOTP secret is bound to, in place of a webhook endpoint's id. */
export const TotpSealContext = "people-totp"

const totp = (secret: string, label = "", issuer = "") =>
  new OTPAuth.TOTP({
    issuer,
    label,
    algorithm: "SHA1",
    digits: TotpDigits,
    period: Person.TotpStepSeconds,
    secret: OTPAuth.Secret.fromBase32(secret)
  })

/** The code as typed, its spaces gone, if it is six digits; else `undefined`. */
export const totpCode = (code: string): string | undefined => {
  const bare = code.replace(/\s+/g, "")
  return /^[0-9]{6}$/.test(bare) ? bare : undefined
}

/** The step of `at` (`floor(unix / 30)`). */
export const stepAt = (at: DateTime.Utc): number =>
  Math.floor(DateTime.toEpochMillis(at) / 1000 / Person.TotpStepSeconds)

/** The step within one of `now`'s whose code `code` is under the base32 `secret`, or `undefined`. */
export const matchingStep = (secret: string, code: string, now: DateTime.Utc): number | undefined => {
  const token = totpCode(code)
  if (token === undefined) return undefined
  const delta = totp(secret).validate({ token, timestamp: DateTime.toEpochMillis(now), window: 1 })
  return delta === null ? undefined : stepAt(now) + delta
}

/** The `otpauth://totp/...` URI of `secret` for `email` at `issuer`. */
export const totpUri = (secret: string, email: string, issuer: string): string =>
  totp(secret, email, issuer).toString()

// ---------------------------------------------------------------------------------------------------------
// Tokens and recovery codes

export const newToken = (): string => randomBytes(32).toString("base64url")

/**
 * The recovery codes' alphabet: lower-case letters and digits without the look-alikes (0 o, 1 l i), 31
 * symbols; twelve of them are 59 bits.
 */
export const RecoveryAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

const randomText = (length: number): string =>
  Array.from({ length }, () => RecoveryAlphabet[randomInt(RecoveryAlphabet.length)]).join("")

/** `xxxx-xxxx-xxxx` of `RecoveryAlphabet`. */
export const newRecoveryCode = (): string => [randomText(4), randomText(4), randomText(4)].join("-")

/** `RecoveryCodeCount` distinct recovery codes. */
export const newRecoveryCodes = (): ReadonlyArray<string> => {
  const codes = new Set<string>()
  while (codes.size < Person.RecoveryCodeCount) codes.add(newRecoveryCode())
  return [...codes]
}

/** A recovery code as typed, as it is digested: lower-cased, without spaces; the dashes are kept. */
export const normalRecoveryCode = (code: string): string => code.replace(/\s+/g, "").toLowerCase()

/** A one-time password: 20 symbols of `RecoveryAlphabet` in groups of 5 (99 bits), easy to read out. */
export const newOneTimePassword = (): string =>
  [randomText(5), randomText(5), randomText(5), randomText(5)].join("-")

/** The name in `server_secrets` of the key of `digest`. */
export const DigestKeyName = "people_digest"

// ---------------------------------------------------------------------------------------------------------
// The service

export const make = Effect.gen(function* () {
  const secrets = yield* ServerSecrets
  const sealer = yield* SecretSealer.SecretSealer
  // Made once, so a check against an unknown account costs what a real one does.
  const dummy = hashSync("no account has this password", ArgonOptions)

  // The key is read on first use, then kept: every process reads the same row.
  let digestKey: Uint8Array | undefined
  const key = Effect.suspend(() =>
    digestKey !== undefined
      ? Effect.succeed(digestKey)
      : Effect.tap(secrets.ensure(DigestKeyName), (bytes) => {
          digestKey = bytes
        })
  ).pipe(Effect.orDie)

  return {
    passwordProblem,
    hashPassword: (password) => Effect.promise(() => argonHash(password, ArgonOptions)),
    verifyPassword: (hash, password) =>
      Effect.promise(() =>
        argonVerify(hash ?? dummy, password).then(
          (ok) => ok && hash !== undefined,
          // A stored hash that does not parse matches nothing.
          () => false
        )
      ),
    oneTimePassword: Effect.sync(newOneTimePassword),
    newTotpSecret: Effect.gen(function* () {
      const secret = new OTPAuth.Secret({ size: TotpSecretBytes }).base32
      return { secret, sealed: yield* sealer.seal(TotpSealContext, secret) }
    }),
    totpUri,
    totpStep: (sealed, code, now) =>
      Effect.map(sealer.open(TotpSealContext, sealed), (secret) => matchingStep(secret, code, now)),
    newToken: Effect.sync(newToken),
    digest: (secret) => Effect.map(key, (k) => createHmac("sha256", k).update(secret, "utf8").digest("hex")),
    newRecoveryCodes: Effect.sync(newRecoveryCodes)
  } satisfies Credentials.CredentialsService
})

/** `Credentials` over the deployment's server secrets and master key (the webhook secrets' sealer). */
export const layer: Layer.Layer<Credentials.Credentials, never, ServerSecrets | SecretSealer.SecretSealer> =
  Layer.effect(Credentials.Credentials, make)
