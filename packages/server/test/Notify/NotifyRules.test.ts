/**
 * The rules of customer notices that need no server: the document and its phone, the retry schedule and
 * what a failure leads to, the configuration, and what the start-up lines say.
 */
import { DateTime, Duration, Effect } from "effect"
import { ConfigProvider } from "effect"
import { describe, expect, it } from "vitest"
import * as Banner from "../../src/Ops/Banner.js"
import * as Config from "../../src/Platform/Config.js"
import * as Document from "../../src/Notify/Document.js"
import * as Signing from "../../src/Webhooks/Signing.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

describe("Document", () => {
  const notice = {
    id: "code:1",
    customerId: "6f1c5a56-2f4e-4c43-9b62-0f3f5c0f8a11" as never,
    environment: "test" as const,
    kind: "one_time_code" as const,
    title: "Your laari code",
    body: "123456 is your code",
    data: { code: "123456", challenge_id: "c" },
    createdAt: at("2026-11-25T10:00:00Z"),
    expiresAt: at("2026-11-25T10:05:00Z")
  }

  it("is snake_case with Unix seconds, the phone filled in when sent, byte for byte the same each time", () => {
    const stored = Document.stored(notice)
    expect(JSON.parse(stored)).toEqual({
      id: "code:1",
      type: "one_time_code",
      created: 1_795_600_800,
      expires: 1_795_601_100,
      livemode: false,
      customer: { id: notice.customerId, phone: null },
      title: "Your laari code",
      body: "123456 is your code",
      data: { code: "123456", challenge_id: "c" }
    })
    const sent = Document.withPhone(stored, "+960 7771234")
    expect(JSON.parse(sent).customer).toEqual({ id: notice.customerId, phone: "+960 7771234" })
    expect(Document.withPhone(stored, "+960 7771234")).toBe(sent)
    expect(sent.indexOf('"customer"')).toBeLessThan(sent.indexOf('"title"'))
    const { expiresAt: _, ...other } = notice
    expect(JSON.parse(Document.stored({ ...other, environment: "live" }))).toMatchObject({
      expires: null,
      livemode: true
    })
  })

  it("retries quickly, then hourly, for a day; a code whose next try would come after it expired is dropped", () => {
    const made = at("2026-11-25T10:00:00Z")
    const limits = { expiresAt: null, giveUpAt: Document.giveUpAt(made) }
    expect(Duration.toSeconds(Document.delayAfter(1))).toBe(5)
    expect(Duration.toSeconds(Document.delayAfter(100))).toBe(3600)
    expect(Document.afterFailure(1, made, limits)).toEqual({
      _tag: "Retry",
      at: DateTime.addDuration(made, Duration.seconds(5))
    })
    // The last try fits in the day; the one after would not.
    const late = at("2026-11-26T09:00:00Z")
    expect(Document.afterFailure(20, late, limits)._tag).toBe("Retry")
    expect(Document.afterFailure(20, at("2026-11-26T09:00:01Z"), limits)).toEqual({ _tag: "GaveUp" })
    const code = { expiresAt: at("2026-11-25T10:05:00Z"), giveUpAt: limits.giveUpAt }
    expect(Document.afterFailure(5, at("2026-11-25T10:02:59Z"), code)._tag).toBe("Retry")
    expect(Document.afterFailure(5, at("2026-11-25T10:03:00Z"), code)).toEqual({ _tag: "Expired" })
  })
})

describe("configuration", () => {
  const read = (env: Record<string, string>) =>
    Effect.runPromise(
      Effect.either(
        Config.fromEnv.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
      )
    )

  it("takes LAARI_NOTIFY_URL (http or https) and a whsec_ LAARI_NOTIFY_SECRET; refuses others", async () => {
    const secret = Signing.generateSecret()
    const ok = await read({
      LAARI_NOTIFY_URL: "https://notify.wallet.internal/v1/notices",
      LAARI_NOTIFY_SECRET: secret
    })
    expect(ok).toMatchObject({
      right: { notifyUrl: "https://notify.wallet.internal/v1/notices", notifySecret: secret }
    })
    expect(await read({})).toMatchObject({ right: { notifyUrl: undefined, notifySecret: undefined } })
    for (const env of [
      { LAARI_NOTIFY_URL: "ftp://notify.internal/" },
      { LAARI_NOTIFY_URL: "https://user:pw@notify.internal/" },
      { LAARI_NOTIFY_URL: "not a url" },
      { LAARI_NOTIFY_SECRET: "hunter2" },
      { LAARI_NOTIFY_SECRET: "whsec_c2hvcnQ=" }
    ] as ReadonlyArray<Record<string, string>>)
      expect((await read(env))._tag, JSON.stringify(env)).toBe("Left")
  })
})

describe("start-up lines", () => {
  const base = {
    config: {
      port: 4000,
      databaseUrl: undefined,
      dataDir: "./.data",
      baseUrl: "http://localhost:4000",
      checkoutUrl: "http://localhost:4000",
      opsToken: "t",
      clock: "system" as const,
      maxBodyBytes: 1,
      rateLimit: 0,
      webhookAllowPrivate: false
    },
    token: { value: "t", source: "env" as const, file: undefined },
    seeded: undefined,
    processes: 1
  }
  const secret = Signing.generateSecret()
  const url = "https://notify.internal/v1/notices?token=abc"

  it("say where notices go and how they are signed; a generated secret only on a terminal", () => {
    const text = (notices: Parameters<typeof Banner.lines>[0]["notices"], showSecrets: boolean) =>
      Banner.lines({ ...base, showSecrets, notices }).join("\n")
    expect(text(undefined, true)).toContain("notices     kept in laari (the wallet page)")
    const fromEnv = text({ url, signing: { secret, source: "env" } }, true)
    expect(fromEnv).toContain(
      "notices     POST https://notify.internal/v1/notices, signed with LAARI_NOTIFY_SECRET"
    )
    expect(fromEnv).not.toContain(secret)
    expect(fromEnv).not.toContain("token=abc")
    const generated = { url, signing: { secret, source: "database" as const } }
    expect(text(generated, true)).toContain('kept in the database (server_secrets "notify_signing")')
    expect(text(generated, true)).toContain(secret)
    expect(text(generated, false)).not.toContain(secret)
  })
})
