/**
 * People's credentials: RFC 6238's SHA-1 vectors through `totpStep` (their six-digit truncations: the
 * RFC's codes have eight), the one-step window each way and nothing further, codes as typed; argon2id
 * hashes that verify their password only, and the dummy path for an unknown account; the password rules
 * (length, the common list whatever the case, the email); tokens, keyed digests and recovery codes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Credentials as Port, SecretSealer } from "@laari/core"
import { randomBytes } from "node:crypto"
import { DateTime, Duration, Effect, Layer } from "effect"
import * as OTPAuth from "otpauth"
import * as CommonPasswords from "../../src/People/CommonPasswords.js"
import * as Credentials from "../../src/People/Credentials.js"
import { ServerSecrets } from "../../src/Platform/ServerSecrets.js"
import * as Secrets from "../../src/Webhooks/Secrets.js"

/** The webhook secrets' sealing over one fresh master key, as `Webhooks/Sealer` gives it. */
const sealerOf = (ring: Secrets.Keyring): SecretSealer.SecretSealerService => ({
  seal: (id, secret) => Effect.sync(() => Secrets.seal(ring, id, secret)),
  open: (id, sealed) => Effect.sync(() => Secrets.open(ring, id, sealed))
})

const ring: Secrets.Keyring = { current: Secrets.key(randomBytes(32)), older: [] }

/** The layer over server secrets held in a map (each made once, as in `server_secrets`). */
const layerWith = (kept: Map<string, Uint8Array>) =>
  Credentials.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        Layer.succeed(ServerSecrets, {
          ensure: (name) =>
            Effect.sync(() => {
              if (!kept.has(name)) kept.set(name, new Uint8Array(randomBytes(32)))
              return kept.get(name)!
            })
        }),
        Layer.succeed(SecretSealer.SecretSealer, sealerOf(ring))
      )
    )
  )

const credentials = Effect.provide(Port.Credentials, layerWith(new Map()))

const at = (unixSeconds: number) => DateTime.unsafeMake(unixSeconds * 1000)

/** RFC 6238 appendix B, SHA-1: the time and the eight-digit code; the seed is "12345678901234567890". */
const vectors: ReadonlyArray<readonly [number, string]> = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"]
]
const rfcSecret = new OTPAuth.Secret({ buffer: new TextEncoder().encode("12345678901234567890").buffer })
  .base32

describe("TOTP", () => {
  it.effect("RFC 6238's SHA-1 vectors (six-digit truncations) give their own step", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const sealed = yield* SecretSealer.SecretSealer.pipe(
        Effect.flatMap((s) => s.seal(Credentials.TotpSealContext, rfcSecret)),
        Effect.provideService(SecretSealer.SecretSealer, sealerOf(ring))
      )
      expect(sealed).not.toContain(rfcSecret)
      for (const [time, code] of vectors) {
        const six = code.slice(-6)
        expect(yield* c.totpStep(sealed, six, at(time)), `${time}`).toBe(Math.floor(time / 30))
        // The eight digits themselves are no code here.
        expect(yield* c.totpStep(sealed, code, at(time))).toBeUndefined()
      }
    })
  )

  it.effect("one step either side is accepted with its own step, two away is refused", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const { secret, sealed } = yield* c.newTotpSecret
      const time = 1_800_000_015
      const step = Math.floor(time / 30)
      const code = (s: number) =>
        new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 }).generate({
          timestamp: s * 30_000
        })
      expect(yield* c.totpStep(sealed, code(step), at(time))).toBe(step)
      expect(yield* c.totpStep(sealed, code(step - 1), at(time))).toBe(step - 1)
      expect(yield* c.totpStep(sealed, code(step + 1), at(time))).toBe(step + 1)
      for (const far of [step - 2, step + 2, step - 10]) {
        // A code of a far step could equal a near one's by chance (one in a million): skip that case.
        if ([step - 1, step, step + 1].some((near) => code(near) === code(far))) continue
        expect(yield* c.totpStep(sealed, code(far), at(time)), `${far - step}`).toBeUndefined()
      }
    })
  )

  it.effect("a code is six digits, spaces aside; anything else is no code", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const { secret, sealed } = yield* c.newTotpSecret
      const time = 1_700_000_000
      const right = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({
        timestamp: time * 1000
      })
      const step = Math.floor(time / 30)
      expect(yield* c.totpStep(sealed, ` ${right.slice(0, 3)} ${right.slice(3)} `, at(time))).toBe(step)
      for (const wrong of ["", "12345", "1234567", `${right}0`, right.replace(/./, "a"), "１２３４５６"])
        expect(yield* c.totpStep(sealed, wrong, at(time)), wrong).toBeUndefined()
      expect(Credentials.totpCode("12 34 56")).toBe("123456")
      expect(Credentials.totpCode("12-34-56")).toBeUndefined()
    })
  )

  it.effect("new secrets are 20 random bytes in base32, sealed apart from webhook endpoints", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const one = yield* c.newTotpSecret
      const two = yield* c.newTotpSecret
      expect(one.secret).toMatch(/^[A-Z2-7]{32}$/)
      expect(OTPAuth.Secret.fromBase32(one.secret).bytes.length).toBe(20)
      expect(two.secret).not.toBe(one.secret)
      expect(Secrets.open(ring, Credentials.TotpSealContext, one.sealed)).toBe(one.secret)
      expect(() => Secrets.open(ring, "people-totp-other", one.sealed)).toThrow(/altered/)
    })
  )

  it.effect("the URI carries the issuer, the label, SHA-1, six digits and 30 s", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const uri = c.totpUri("JBSWY3DPEHPK3PXP", "ana@example.mv", "laari")
      expect(uri.startsWith("otpauth://totp/laari:ana%40example.mv?")).toBe(true)
      const query = new URL(uri).searchParams
      expect(Object.fromEntries(query)).toEqual({
        issuer: "laari",
        secret: "JBSWY3DPEHPK3PXP",
        algorithm: "SHA1",
        digits: "6",
        period: "30"
      })
      expect(OTPAuth.URI.parse(uri).label).toBe("ana@example.mv")
    })
  )
})

describe("passwords", () => {
  it.effect("argon2id at OWASP's parameters verifies its password and no other", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const hash = yield* c.hashPassword("a long and quiet river")
      expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
      expect(hash).not.toContain("river")
      expect(yield* c.verifyPassword(hash, "a long and quiet river")).toBe(true)
      expect(yield* c.verifyPassword(hash, "a long and quiet rivers")).toBe(false)
      expect(yield* c.verifyPassword(hash, "A long and quiet river")).toBe(false)
      // A fresh salt each time.
      expect(yield* c.hashPassword("a long and quiet river")).not.toBe(hash)
      expect(yield* c.verifyPassword("not a hash", "a long and quiet river")).toBe(false)
    })
  )

  it.live("an unknown account does the work of a check and answers false", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const hash = yield* c.hashPassword("another long passphrase")
      const time = (check: Effect.Effect<boolean>) =>
        Effect.map(Effect.timed(check), ([d, ok]) => ({ ok, ms: Duration.toMillis(d) }))
      let known = 0
      let unknown = 0
      for (let i = 0; i < 5; i++) {
        known += (yield* time(c.verifyPassword(hash, "wrong passphrase here"))).ms
        const none = yield* time(c.verifyPassword(undefined, "no account has this password"))
        expect(none.ok).toBe(false)
        unknown += none.ms
      }
      // The same argon2 work: within a factor of each other (they are some milliseconds each).
      expect(unknown).toBeGreaterThan(known / 4)
      expect(unknown).toBeLessThan(known * 4 + 10)
      expect(yield* c.verifyPassword(undefined, "")).toBe(false)
    })
  )

  it("refuses short ones, common ones whatever the case, and the email's local part", () => {
    const email = "Mariyam.Ali@Example.mv"
    expect(Credentials.passwordProblem("short", email)).toBe(Credentials.Problems.short)
    expect(Credentials.passwordProblem("elevenchars", email)).toBe(Credentials.Problems.short)
    // Twelve code points, though more UTF-16 units: counted as twelve.
    expect(Credentials.passwordProblem("🌴🌴🌴🌴🌴🌴🌴🌴🌴🌴🌴", email)).toBe(Credentials.Problems.short)
    expect(Credentials.passwordProblem("🌴🌴🌴🌴🌴🌴🌴🌴🌴🌴🌴🌴", email)).toBeUndefined()
    for (const common of ["qwerty123456", "QWERTY123456", "1q2w3e4r5t6y", "LeaveMeAlone", "FINALFANTASY"])
      expect(Credentials.passwordProblem(common, email), common).toBe(Credentials.Problems.common)
    for (const common of ["password", "Password", "123456", "iloveyou", "TrustNo1"])
      expect(CommonPasswords.has(common), common).toBe(true)
    expect(CommonPasswords.size()).toBeGreaterThan(40_000)
    expect(CommonPasswords.has("tide pools under a violet moon")).toBe(false)
    for (const mine of [
      "mariyam.ali@example.mv",
      "MARIYAM.ALI@EXAMPLE.MV",
      "mariyam.ali2024!",
      "my mariyam.ali pass"
    ])
      expect(Credentials.passwordProblem(mine, email), mine).toBe(Credentials.Problems.email)
    expect(Credentials.passwordProblem("tide pools under a violet moon", email)).toBeUndefined()
    // A local part of under three letters is refused as the whole password only.
    expect(Credentials.passwordProblem("abundant kelp forest", "ab@example.mv")).toBeUndefined()
    for (const message of Object.values(Credentials.Problems)) expect(message.length).toBeLessThan(60)
  })

  it.effect("one-time passwords are long, random, and pass the rules", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const one = yield* c.oneTimePassword
      expect(one).toMatch(/^[a-km-np-z2-9]{5}(-[a-km-np-z2-9]{5}){3}$/)
      expect(yield* c.oneTimePassword).not.toBe(one)
      expect(c.passwordProblem(one, "someone@example.mv")).toBeUndefined()
    })
  )
})

describe("tokens, digests and recovery codes", () => {
  it.effect("tokens are 32 random bytes, base64url", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const tokens = yield* Effect.all(Array.from({ length: 50 }, () => c.newToken))
      for (const t of tokens) {
        expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(Buffer.from(t, "base64url").length).toBe(32)
      }
      expect(new Set(tokens).size).toBe(50)
    })
  )

  it.effect("digests are HMAC-SHA-256 under the kept people_digest key: the same in every process", () =>
    Effect.gen(function* () {
      const kept = new Map<string, Uint8Array>()
      const one = yield* Effect.provide(Port.Credentials, layerWith(kept))
      const two = yield* Effect.provide(Port.Credentials, layerWith(kept))
      const other = yield* Effect.provide(Port.Credentials, layerWith(new Map()))
      const d = yield* one.digest("token-1")
      expect(d).toMatch(/^[0-9a-f]{64}$/)
      expect([...kept.keys()]).toEqual([Credentials.DigestKeyName])
      expect(yield* two.digest("token-1")).toBe(d)
      expect(yield* one.digest("token-2")).not.toBe(d)
      // Another deployment's key, another digest: a stolen table cannot be checked without the key.
      expect(yield* other.digest("token-1")).not.toBe(d)
    })
  )

  it.effect("ten distinct recovery codes xxxx-xxxx-xxxx without look-alikes, over 50 bits each", () =>
    Effect.gen(function* () {
      const c = yield* credentials
      const seen = new Set<string>()
      for (let round = 0; round < 20; round++) {
        const codes = yield* c.newRecoveryCodes
        expect(codes.length).toBe(10)
        expect(new Set(codes).size).toBe(10)
        for (const code of codes) {
          expect(code).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/)
          expect(code).not.toMatch(/[01oli]/)
          seen.add(code)
        }
      }
      expect(seen.size).toBe(200)
      expect(12 * Math.log2(Credentials.RecoveryAlphabet.length)).toBeGreaterThan(50)
      expect(new Set(Credentials.RecoveryAlphabet).size).toBe(Credentials.RecoveryAlphabet.length)
      expect(Credentials.normalRecoveryCode(" ABCD-efgh-JKMN ")).toBe("abcd-efgh-jkmn")
    })
  )
})
