/**
 * The SQL adapters beyond the store contract, on PGlite and (with DATABASE_URL) PostgreSQL: what only a
 * database shows (a refused insert leaves the transaction usable, SKIP LOCKED, json key order) and the
 * server's `Directory` (customers, payer wallets, events; merchants and keys are under the contract).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect } from "@effect/vitest"
import { Crypto, Events, type Ids, type Mandate, Store } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Cause, DateTime, Deferred, Effect, Exit, Fiber } from "effect"
import { Directory } from "../../src/Platform/Directory.js"
import * as TestDatabase from "../support/TestDatabase.js"

const uuid = Effect.flatMap(Crypto.Crypto, (c) => c.uuid)
const at = (iso: string) => DateTime.unsafeMake(iso)

const mandate = (tenant: Ids.Tenant, overrides: Partial<Mandate.Mandate> = {}) =>
  Effect.map(
    uuid,
    (id): Mandate.Mandate => ({
      id: id as Ids.MandateId,
      merchantId: tenant.merchantId,
      environment: tenant.environment,
      reference: `ref-${id}`,
      status: "INITIATED",
      title: "SQL test",
      description: null,
      perChargeCap: 10_000,
      periodCap: null,
      period: null,
      periodKey: null,
      periodCharged: 0,
      returnUrl: null,
      customerId: null,
      setupExpiresAt: at("2030-01-02T00:00:00Z"),
      expiresAt: at("2031-01-01T00:00:00Z"),
      approvedAt: null,
      revokedAt: null,
      revokedBy: null,
      declinedAt: null,
      expiredAt: null,
      createdAt: at("2030-01-01T00:00:00Z"),
      ...overrides
    })
  )

const freshTenant = Effect.gen(function* () {
  const merchant = yield* (yield* Seed.Seed).merchant({ name: "SQL store merchant" })
  return { merchantId: merchant.id, environment: "test" } as Ids.Tenant
})

TestDatabase.eachBackend("SQL store", (it, backend) => {
  it.effect("a duplicate reference is DuplicateReference and leaves the caller's transaction usable", () =>
    Effect.gen(function* () {
      const tx = yield* Store.Transactor
      const store = yield* Store.MandatesStore
      const tenant = yield* freshTenant
      const first = yield* mandate(tenant)
      yield* store.insert(first)
      const duplicate = yield* mandate(tenant, { reference: first.reference })
      const after = yield* mandate(tenant)
      yield* tx.withTransaction(
        Effect.gen(function* () {
          const refused = yield* Effect.flip(store.insert(duplicate))
          expect(refused).toEqual(new Store.DuplicateReference({ reference: first.reference }))
          // On PostgreSQL a failed statement would have aborted the transaction; this one was not.
          yield* store.insert(after)
        })
      )
      expect((yield* store.find(tenant, { _tag: "ById", id: after.id }))?.id).toBe(after.id)
      expect(yield* store.find(tenant, { _tag: "ById", id: duplicate.id })).toBeUndefined()
    })
  )

  it.effect("lookups by something that is not a UUID find nothing instead of failing", () =>
    Effect.gen(function* () {
      const store = yield* Store.MandatesStore
      const tenant = yield* freshTenant
      expect(yield* store.find(tenant, { _tag: "ById", id: "not-a-uuid" })).toBeUndefined()
      expect(yield* store.lockById("not-a-uuid")).toBeUndefined()
      expect(yield* (yield* Store.ChargesStore).listByMandate("nope")).toEqual([])
      expect(yield* (yield* Store.MerchantsStore).get("nope" as Ids.MerchantId)).toBeUndefined()
      expect(yield* (yield* Store.MerchantRegistryStore).listOutlets("nope" as Ids.MerchantId)).toEqual([])
    })
  )

  it.effect("nextExpiryAt and claimExpiring see exactly the mandates that can still expire", () =>
    Effect.gen(function* () {
      yield* TestDatabase.reset
      const store = yield* Store.MandatesStore
      const tx = yield* Store.Transactor
      expect(yield* store.nextExpiryAt).toBeUndefined()
      const tenant = yield* freshTenant
      const link = yield* mandate(tenant, { setupExpiresAt: at("2030-01-01T12:00:00.250Z") })
      const live = yield* mandate(tenant, { status: "ACTIVE", expiresAt: at("2030-01-01T06:00:00Z") })
      yield* store.insert(link)
      yield* store.insert(live)
      yield* store.insert(
        yield* mandate(tenant, { status: "REVOKED", expiresAt: at("2029-01-01T00:00:00Z") })
      )
      expect(DateTime.formatIso((yield* store.nextExpiryAt)!)).toBe("2030-01-01T06:00:00.000Z")
      const claimed = yield* tx.withTransaction(store.claimExpiring(at("2030-01-01T12:00:00.250Z"), 10))
      expect(claimed.map((m) => m.id).sort()).toEqual([link.id, live.id].sort())
      expect(yield* tx.withTransaction(store.claimExpiring(at("2030-01-01T12:00:00.249Z"), 10))).toHaveLength(
        1
      )
    })
  )

  it.effect("IdempotencyStore.claim refuses to run outside a transaction", () =>
    Effect.gen(function* () {
      const tx = yield* Store.Transactor
      const store = yield* Store.IdempotencyStore
      const tenant = yield* freshTenant
      const scope = { ...tenant, method: "POST", path: "/mandates", key: yield* uuid }
      const exit = yield* Effect.exit(store.claim(scope, "fp", DateTime.unsafeNow()))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect(yield* tx.withTransaction(store.claim(scope, "fp", DateTime.unsafeNow()))).toEqual({
        _tag: "Claimed"
      })
    })
  )

  it.effect("the outbox keeps an envelope exactly as written, key order included", () =>
    Effect.gen(function* () {
      const outbox = yield* Events.Outbox
      const directory = yield* Directory
      const tenant = yield* freshTenant
      const m = yield* mandate(tenant)
      const event = Events.make({
        id: `evt_${(yield* uuid).replaceAll("-", "")}`,
        type: "mandate.activated",
        merchantId: tenant.merchantId,
        environment: "test",
        now: at("2030-01-01T00:00:00Z"),
        object: Events.mandateObject(m)
      })
      yield* outbox.append(event)
      const [stored] = yield* directory.listEvents({ merchantId: tenant.merchantId, limit: 1 })
      expect(JSON.stringify(stored!.envelope)).toBe(JSON.stringify(Events.seal(event, 1).envelope))
    })
  )

  it.effect("every query the adapters make is served by an index", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const id = `'${yield* uuid}'`
      // The adapters' queries, with literals for parameters.
      const queries = [
        `SELECT * FROM mandates WHERE merchant_id = ${id} AND environment = 'test' AND reference = 'r'`,
        `SELECT * FROM mandates WHERE merchant_id = ${id} AND environment = 'test' AND status = 'ACTIVE'
               ORDER BY created_at DESC, position DESC LIMIT 25 OFFSET 50`,
        `SELECT * FROM mandates WHERE customer_id = ${id} ORDER BY created_at DESC, position DESC`,
        `SELECT * FROM mandates WHERE (status = 'INITIATED' AND setup_expires_at <= now())
               OR (status IN ('ACTIVE', 'SUSPENDED') AND expires_at <= now()) LIMIT 100 FOR UPDATE SKIP LOCKED`,
        `SELECT least((SELECT min(setup_expires_at) FROM mandates WHERE status = 'INITIATED'),
               (SELECT min(expires_at) FROM mandates WHERE status IN ('ACTIVE', 'SUSPENDED')))`,
        `SELECT * FROM mandate_charges WHERE mandate_id = ${id} ORDER BY created_at DESC, position DESC`,
        `SELECT * FROM notifications WHERE customer_id = ${id} ORDER BY created_at DESC, position DESC`,
        `SELECT * FROM events WHERE merchant_id = ${id} ORDER BY position DESC LIMIT 10`,
        "SELECT * FROM events ORDER BY position DESC LIMIT 10",
        "DELETE FROM idempotency_keys WHERE created_at <= now()",
        "SELECT * FROM api_keys WHERE key_hash = 'h'",
        `SELECT * FROM api_keys WHERE merchant_id = ${id} ORDER BY created_at, id`,
        `SELECT id, name FROM outlets WHERE merchant_id = ${id} ORDER BY id`,
        "SELECT * FROM customers WHERE environment = 'test' AND phone = 'p'",
        "SELECT * FROM ledger_transfers WHERE id = 't'",
        "SELECT * FROM ledger_accounts WHERE id = 'a' FOR UPDATE",
        `SELECT * FROM checkout_sessions WHERE merchant_id = ${id} AND environment = 'test'
               ORDER BY created_at DESC, position DESC LIMIT 25 OFFSET 0`,
        `SELECT * FROM events WHERE merchant_id = ${id} AND environment = 'test' ORDER BY position DESC LIMIT 25`,
        `SELECT * FROM webhook_endpoints WHERE merchant_id = ${id} AND environment = 'test' AND deleted_at IS NULL
               ORDER BY position DESC LIMIT 25`,
        `SELECT * FROM webhook_deliveries WHERE endpoint_id = ${id} ORDER BY position DESC LIMIT 25`,
        `SELECT d.id FROM webhook_deliveries d WHERE d.status = 'PENDING' AND d.due_at <= now()
               ORDER BY d.due_at LIMIT 32 FOR UPDATE OF d SKIP LOCKED`,
        "SELECT value FROM event_sequences WHERE subject = 's'"
      ]
      yield* sql.withTransaction(
        Effect.gen(function* () {
          // Tables here are small: forbid sequential scans so the plan shows whether an index serves.
          yield* sql`SET LOCAL enable_seqscan = off`
          for (const query of queries) {
            const plan = yield* sql.unsafe<Record<string, string>>(`EXPLAIN ${query}`)
            expect(plan.map((row) => row["QUERY PLAN"]).join("\n"), query).not.toContain("Seq Scan")
          }
        })
      )
    })
  )

  if (backend.name === "PostgreSQL") {
    it.effect("two workers claiming at once get disjoint mandates (FOR UPDATE SKIP LOCKED)", () =>
      Effect.gen(function* () {
        yield* TestDatabase.reset
        const store = yield* Store.MandatesStore
        const tx = yield* Store.Transactor
        const tenant = yield* freshTenant
        const due = yield* Effect.all(
          Array.from({ length: 6 }, () => mandate(tenant, { setupExpiresAt: at("2030-01-01T00:00:00Z") }))
        )
        for (const m of due) yield* store.insert(m)
        const now = at("2030-06-01T00:00:00Z")
        const claimedA = yield* Deferred.make<ReadonlyArray<Mandate.Mandate>>()
        const release = yield* Deferred.make<void>()
        const a = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function* () {
              yield* Deferred.succeed(claimedA, yield* store.claimExpiring(now, 3))
              yield* Deferred.await(release)
            })
          )
        )
        const first = yield* Deferred.await(claimedA)
        // A holds its three rows: B skips them instead of waiting.
        const second = yield* tx
          .withTransaction(store.claimExpiring(now, 10))
          .pipe(Effect.timeout("5 seconds"))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(a)
        const ids = (ms: ReadonlyArray<Mandate.Mandate>) => ms.map((m) => m.id)
        expect(first).toHaveLength(3)
        expect(second).toHaveLength(3)
        expect(new Set([...ids(first), ...ids(second)])).toEqual(new Set(ids(due)))
      })
    )
  }

  describe("Directory", () => {
    it.effect("createCustomer: a phone is unique per environment", () =>
      Effect.gen(function* () {
        const directory = yield* Directory
        const phone = `+960 ${yield* uuid}`
        const customer = yield* directory.createCustomer({
          environment: "live",
          phone,
          name: "Aisha",
          balance: 700
        })
        expect(customer).toMatchObject({ environment: "live", phone, name: "Aisha" })
        expect(yield* directory.payer(customer.id)).toMatchObject({
          balance: 700,
          limit: null,
          timeZone: "Indian/Maldives"
        })
        const taken = yield* Effect.flip(directory.createCustomer({ environment: "live", phone }))
        expect(taken._tag).toBe("PhoneTaken")
        expect((yield* directory.createCustomer({ environment: "test", phone })).environment).toBe("test")
      })
    )

    it.effect("listEvents: newest first, by merchant and type, up to the limit", () =>
      Effect.gen(function* () {
        const outbox = yield* Events.Outbox
        const directory = yield* Directory
        const tenant = yield* freshTenant
        const m = yield* mandate(tenant)
        const types: ReadonlyArray<Events.Type> = [
          "mandate.activated",
          "mandate.charge.succeeded",
          "mandate.revoked"
        ]
        const made = yield* Effect.forEach(types, (type) =>
          Effect.map(uuid, (id) =>
            Events.make({
              id: `evt_${id.replaceAll("-", "")}`,
              type,
              merchantId: tenant.merchantId,
              environment: "test",
              // The same instant: order comes from when they were recorded.
              now: at("2030-01-01T00:00:00Z"),
              object: Events.mandateObject(m)
            })
          )
        )
        for (const e of made) yield* outbox.append(e)
        const ids = (es: ReadonlyArray<Events.Event | Events.Draft>) =>
          es.map((e) => ("envelope" in e ? e.envelope.id : e.id))
        const mine = yield* directory.listEvents({ merchantId: tenant.merchantId, limit: 10 })
        expect(ids(mine)).toEqual(ids([...made].reverse()))
        expect(ids(yield* directory.listEvents({ merchantId: tenant.merchantId, limit: 2 }))).toEqual(
          ids([made[2]!, made[1]!])
        )
        expect(
          ids(
            yield* directory.listEvents({
              merchantId: tenant.merchantId,
              type: "mandate.revoked",
              limit: 10
            })
          )
        ).toEqual([made[2]!.id])
        expect(ids(yield* directory.listEvents({ limit: 1 }))).toEqual([made[2]!.id])
        expect(yield* directory.listEvents({ merchantId: "nope", limit: 10 })).toEqual([])
      })
    )
  })
})
