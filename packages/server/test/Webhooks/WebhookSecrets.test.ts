/**
 * Webhook signing secrets at rest: sealed with AES-256-GCM under the master key, so
 * the database holds no secret, while deliveries still verify with standardwebhooks; the idempotency
 * table keeps no secret either, and a replay is still the first answer byte for byte; the master key
 * rotates (`LAARI_MASTER_KEY_PREVIOUS`), and rows sealed before (or never sealed) are sealed at start.
 * On PGlite (a data directory, to restart on it) and on PostgreSQL (one database across restarts).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { StandardWebhooksVector } from "@laari/testkit"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { ConfigProvider, Effect, Exit, Redacted, Scope } from "effect"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Config from "../../src/Platform/Config.js"
import type { ServerConfig } from "../../src/Platform/Config.js"
import * as ConcealWebhookSecrets from "../../src/Sql/Migrations/0011_conceal_webhook_secrets.js"
import * as Secrets from "../../src/Webhooks/Secrets.js"
import * as F from "../support/Fixtures.js"
import { startQuickest } from "../support/PostgresServer.js"
import * as R from "../support/Receiver.js"
import { createDatabase, postgresUrl } from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

const keyA = randomBytes(32)
const keyB = randomBytes(32)
const redacted = (bytes: Uint8Array) => Redacted.make(new Uint8Array(bytes))

const fromEnv = (env: Record<string, string>) =>
  Effect.runPromiseExit(
    Config.fromEnv.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

describe("LAARI_MASTER_KEY", () => {
  it("is 32 bytes as hex or base64; anything else fails the start saying so, without the value", async () => {
    for (const text of [keyA.toString("hex"), keyA.toString("base64"), keyA.toString("base64url")]) {
      const exit = await fromEnv({ LAARI_MASTER_KEY: text })
      expect(Exit.isSuccess(exit) && Redacted.value(exit.value.masterKey!)).toEqual(new Uint8Array(keyA))
    }
    for (const text of ["short", randomBytes(16).toString("hex"), randomBytes(31).toString("base64")]) {
      const exit = await fromEnv({ LAARI_MASTER_KEY_PREVIOUS: text })
      expect(Exit.isFailure(exit), text).toBe(true)
      const message = String(Exit.isFailure(exit) && exit.cause)
      expect(message).toMatch(/LAARI_MASTER_KEY_PREVIOUS.*must be 32 bytes/)
      expect(message).not.toContain(text)
    }
    const unset = await fromEnv({})
    expect(Exit.isSuccess(unset) && unset.value.masterKey).toBeUndefined()
  })

  it("seals with a fresh nonce each time, opens only for its endpoint and with its key", () => {
    const ring: Secrets.Keyring = { current: Secrets.key(keyA), older: [] }
    const { secret } = StandardWebhooksVector
    const one = Secrets.seal(ring, "e1", secret)
    expect(one).toMatch(/^v1:[0-9a-f]{16}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/)
    expect(Secrets.seal(ring, "e1", secret)).not.toBe(one)
    expect(Secrets.open(ring, "e1", one)).toBe(secret)
    expect(() => Secrets.open(ring, "e2", one)).toThrow(/altered/)
    const [v, id, nonce, body] = one.split(":")
    const flipped = Buffer.from(body!, "base64")
    flipped[0]! ^= 1
    expect(() => Secrets.open(ring, "e1", [v, id, nonce, flipped.toString("base64")].join(":"))).toThrow(
      /altered/
    )
    expect(() => Secrets.open({ current: Secrets.key(keyB), older: [] }, "e1", one)).toThrow(
      /LAARI_MASTER_KEY_PREVIOUS/
    )
    expect(Secrets.open({ current: Secrets.key(keyB), older: [Secrets.key(keyA)] }, "e1", one)).toBe(secret)
  })
})

describe("without LAARI_MASTER_KEY", () => {
  it("seals under a key made once and kept in server_secrets", async () => {
    // Not about the database: PostgreSQL when there is one, spared a PGlite initdb.
    const server = await startQuickest()
    try {
      const m = await F.merchant(server)
      const made = await server.request("POST", "/webhook-endpoints", {
        key: m.test,
        body: { url: "https://example.com/hook", enabled_events: ["*"] }
      })
      const [row] = await server.sql(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ secret: string; kept: string }>`SELECT secret,
            (SELECT value FROM server_secrets WHERE name = 'webhook-secrets-key') AS kept
            FROM webhook_endpoints WHERE id = ${made.body.id}`
        )
      )
      expect(row!.secret).toMatch(new RegExp(`^v1:${Secrets.key(Buffer.from(row!.kept, "hex")).id}:`))
      expect(row!.secret).not.toContain(made.body.secret.slice(6))
    } finally {
      await server.close()
    }
  }, 120_000)
})

/** A store that outlives a server: a PGlite data directory, or one PostgreSQL database. */
const stores: ReadonlyArray<{
  readonly name: string
  readonly skip: boolean
  readonly make: () => Promise<{
    config: Partial<ServerConfig>
    databaseUrl?: string
    drop: () => Promise<void>
  }>
}> = [
  {
    name: "PGlite",
    skip: false,
    make: async () => {
      const dir = mkdtempSync(Path.join(tmpdir(), "laari-secrets-"))
      return { config: { dataDir: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) }
    }
  },
  {
    name: "PostgreSQL",
    skip: postgresUrl === undefined,
    make: async () => {
      const scope = Effect.runSync(Scope.make())
      const url = await Effect.runPromise(Scope.extend(createDatabase(postgresUrl!), scope))
      return { config: {}, databaseUrl: url, drop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
    }
  }
]

for (const backend of stores) {
  describe.skipIf(backend.skip)(`webhook secrets at rest on ${backend.name}`, () => {
    let store: Awaited<ReturnType<(typeof stores)[number]["make"]>>
    let server: TestServer.LocalTestServer | undefined
    let receiver: R.Receiver
    beforeAll(async () => {
      receiver = await R.start()
      store = await backend.make()
    }, 120_000)
    afterAll(async () => {
      await server?.close()
      await receiver?.close()
      await store?.drop()
    }, 60_000)

    const restart = async (config: Partial<ServerConfig>) => {
      await server?.close()
      server = undefined
      server = await TestServer.start({
        databaseUrl: store.databaseUrl,
        config: { ...store.config, ...config }
      })
      return server
    }
    const query = <A extends object>(text: string, ...params: Array<unknown>) =>
      server!.sql(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text, params as Array<any>)))
    const endpointRow = async (id: string) =>
      (
        await query<{ secret: string; previous_secret: string | null; row: string }>(
          "SELECT secret, previous_secret, w::text AS row FROM webhook_endpoints w WHERE id = $1",
          id
        )
      )[0]!
    const keyRows = () =>
      query<{ response_body: string | null }>(
        "SELECT response_body FROM idempotency_keys WHERE path LIKE '/webhook-endpoints%'"
      )
    const delivered = async (key: string, path: string, secret: string) => {
      const before = receiver.received.filter((r) => r.path === path).length
      const made = await server!.request("POST", "/mandates", { key, body: F.mandateBody() })
      expect(made.status, made.text).toBe(201)
      const got = await R.eventually(
        () => receiver.received.filter((r) => r.path === path)[before],
        20_000,
        `a delivery to ${path}`
      )
      const headers = {
        "webhook-id": String(got.headers["webhook-id"]),
        "webhook-timestamp": String(got.headers["webhook-timestamp"]),
        "webhook-signature": String(got.headers["webhook-signature"])
      }
      expect(new StandardWebhook(secret).verify(got.body, headers)).toMatchObject({
        type: expect.any(String)
      })
    }
    const sealedUnder = (stored: string | null, key: Uint8Array) =>
      expect(stored).toMatch(new RegExp(`^v1:${Secrets.key(key).id}:`))

    it("keeps only sealed secrets and no secret in stored responses; replays are the first answer", async () => {
      await restart({ masterKey: redacted(keyA) })
      const m = await F.merchant(server!)
      const path = `/${F.unique("sealed")}`
      const body = { url: receiver.url(path), enabled_events: ["*"] }
      const create = () =>
        server!.request("POST", "/webhook-endpoints", {
          key: m.test,
          body,
          headers: { "idempotency-key": "k1" }
        })
      const made = await create()
      expect(made.status, made.text).toBe(201)
      const { id, secret } = made.body as { id: string; secret: string }
      const row = await endpointRow(id)
      sealedUnder(row.secret, keyA)
      expect(row.row).not.toContain(secret.slice(6))
      await delivered(m.test, path, secret)

      const replay = await create()
      expect(replay.headers.get("idempotent-replay")).toBe("true")
      expect(replay.text).toBe(made.text)

      const rotate = () =>
        server!.request("POST", `/webhook-endpoints/${id}/rotate-secret`, {
          key: m.test,
          body: {},
          headers: { "idempotency-key": "r1" }
        })
      const rotated = await rotate()
      expect(rotated.status, rotated.text).toBe(200)
      const next = rotated.body.secret as string
      const after = await endpointRow(id)
      sealedUnder(after.secret, keyA)
      sealedUnder(after.previous_secret, keyA)
      expect(after.row).not.toContain(next.slice(6))
      expect(after.row).not.toContain(secret.slice(6))
      await delivered(m.test, path, next)
      await delivered(m.test, path, secret)
      expect((await rotate()).text).toBe(rotated.text)
      // The created secret is the previous one now, and still signs: the replay is the same answer.
      expect((await create()).text).toBe(made.text)

      const stored = await keyRows()
      expect(stored.length).toBeGreaterThanOrEqual(2)
      for (const { response_body } of stored) {
        expect(response_body).not.toContain(secret.slice(6))
        expect(response_body).not.toContain(next.slice(6))
        expect(response_body).not.toContain("whsec_")
      }

      // Rotated out: a replay no longer hands back a secret that does not sign.
      expect(
        (await server!.request("POST", `/webhook-endpoints/${id}/rotate-secret`, { key: m.test, body: {} }))
          .status
      ).toBe(200)
      const gone = await create()
      expect(gone.status).toBe(201)
      expect(gone.body).toEqual({ ...made.body, secret: undefined })
      expect(gone.text).not.toContain("secret")
    }, 120_000)

    it("seals again under a new master key, and seals rows stored in plaintext, at start", async () => {
      await restart({ masterKey: redacted(keyA) })
      const m = await F.merchant(server!)
      const path = `/${F.unique("rotating")}`
      const made = await server!.request("POST", "/webhook-endpoints", {
        key: m.test,
        body: { url: receiver.url(path), enabled_events: ["*"] }
      })
      const { id, secret } = made.body as { id: string; secret: string }
      // A row from before sealing, and a stored response from before migration 0011.
      const legacy = await server!.request("POST", "/webhook-endpoints", {
        key: m.test,
        body: { url: receiver.url(`${path}-legacy`), enabled_events: ["*"] }
      })
      await query(
        "UPDATE webhook_endpoints SET secret = $1 WHERE id = $2",
        legacy.body.secret,
        legacy.body.id
      )

      // Without the key that sealed them, the start refuses, naming what to set.
      await server!.close()
      server = undefined
      await expect(
        TestServer.start({
          databaseUrl: store.databaseUrl,
          config: { ...store.config, masterKey: redacted(keyB) }
        })
      ).rejects.toThrow(/LAARI_MASTER_KEY_PREVIOUS/)

      await restart({ masterKey: redacted(keyB), masterKeyPrevious: redacted(keyA) })
      sealedUnder((await endpointRow(id)).secret, keyB)
      sealedUnder((await endpointRow(legacy.body.id)).secret, keyB)
      await delivered(m.test, path, secret)

      // The previous key is no longer needed.
      await restart({ masterKey: redacted(keyB) })
      await delivered(m.test, `${path}-legacy`, legacy.body.secret)
    }, 180_000)

    it("migration 0011 puts each stored secret's fingerprint in its place, the rest unchanged", async () => {
      await restart({ masterKey: redacted(keyB) })
      const secret = `whsec_${randomBytes(32).toString("base64")}`
      const body = `{"id":"x","url":"https://example.com/","secret":"${secret}","createdAt":"t"}`
      const m = await F.merchant(server!)
      await query(
        `INSERT INTO idempotency_keys (merchant_id, environment, method, path, key, fingerprint, response_status,
           response_headers, response_body, created_at)
         VALUES ($1, 'test', 'POST', '/webhook-endpoints', 'legacy', 'f', 201, '{}', $2, now())`,
        m.id,
        body
      )
      await query(ConcealWebhookSecrets.text)
      const [row] = await query<{ response_body: string }>(
        "SELECT response_body FROM idempotency_keys WHERE key = 'legacy'"
      )
      expect(row!.response_body).toBe(body.replace(secret, Secrets.fingerprint(secret)))
    }, 60_000)
  })
}
