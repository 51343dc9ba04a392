/**
 * The secrets of people's sign-in, behind a port so that core names no hashing library: passwords under
 * a memory-hard hash, TOTP secrets sealed under the deployment's key, session tokens, invitation tokens
 * and recovery codes stored only as keyed hashes. The server's implementation is `People/Credentials`.
 */
import { Context, type DateTime, type Effect } from "effect"

export interface CredentialsService {
  /** Why `password` may not be used (too short, a common password, the email itself), or `undefined`. */
  readonly passwordProblem: (password: string, email: string) => string | undefined
  /** The password's memory-hard hash (its parameters and salt inside), for storing. */
  readonly hashPassword: (password: string) => Effect.Effect<string>
  /**
   * Whether `password` matches `hash`. With `hash` `undefined` (no such account) it does the same work
   * and answers `false`, so the time taken does not tell whether an account exists.
   */
  readonly verifyPassword: (hash: string | undefined, password: string) => Effect.Effect<boolean>
  /** A random one-time password for an account made for someone (the seeded owner, the CLI). */
  readonly oneTimePassword: Effect.Effect<string>
  /** A new TOTP secret: its base32 text (shown at enrolment) and the same sealed, for storing. */
  readonly newTotpSecret: Effect.Effect<{ readonly secret: string; readonly sealed: string }>
  /** The `otpauth://` URI an authenticator app scans, for `email` at `issuer`. */
  readonly totpUri: (secret: string, email: string, issuer: string) => string
  /** The step (`floor(unix / 30)`) whose code `code` is, within one step of `now`; `undefined` if none. */
  readonly totpStep: (sealed: string, code: string, now: DateTime.Utc) => Effect.Effect<number | undefined>
  /** A random token for a cookie or a link (at least 32 bytes of entropy, URL-safe). */
  readonly newToken: Effect.Effect<string>
  /** The keyed hash a token or a recovery code is stored and looked up under. */
  readonly digest: (secret: string) => Effect.Effect<string>
  /** `RecoveryCodeCount` new recovery codes, as shown once (`xxxx-xxxx-xxxx`). */
  readonly newRecoveryCodes: Effect.Effect<ReadonlyArray<string>>
}

export class Credentials extends Context.Tag("laari/Credentials")<Credentials, CredentialsService>() {}
