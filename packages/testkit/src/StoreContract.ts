/**
 * THE store contract: the behaviour every storage adapter (memory here; PGlite and PostgreSQL in the
 * server) must show, as one vitest suite an adapter registers with
 *
 * ```ts
 * StoreContract.suite("memory", () => Testkit.ports())
 * ```
 *
 * The suite builds one layer from `makeLayer()` for all its tests, puts core's `Engine` on top (rendering with `MemoryQrImages.placeholder`: images are the renderer's business, not
 * the store's, and the placeholder's bytes are predictable), and runs on the real clock (no `TestClock`):
 * store methods get explicit times, and the service tests run on a manual clock of their own. Every test makes its own merchant, so tests share a database
 * without sharing data; the few store methods that are global (`claimExpiring`, `nextExpiryAt`, `claimDue`,
 * `nextDueAt`, `purge`) are tested with dates in 1950, which no other test uses, inside transactions that are
 * rolled back.
 */
import { describe, expect, layer } from "@effect/vitest"
import {
  Approval,
  Balance,
  Calendar,
  CheckoutSession,
  Crypto,
  Emv,
  Engine,
  Errors,
  Events,
  Ids,
  Idempotency,
  Invoice,
  Mandate,
  Mandates,
  Notifications,
  QrCode,
  QrCodes,
  QrScheme,
  Store,
  Subscription,
  Wallet,
  Work
} from "@laari/core"
import { Cause, Data, DateTime, Deferred, Effect, Either, Exit, Fiber, Layer } from "effect"
import * as MemoryQrImages from "./MemoryQrImages.js"
import * as PaymentReadContract from "./PaymentReadContract.js"
import * as RefundContract from "./RefundContract.js"
import { type MerchantInput, type PayerPatch, SandboxPayerBalance, Seed } from "./Seed.js"

/** Every port of core: what a host brings. */
export type AllCorePorts = Store.Ports | Crypto.Crypto

// -------------------------------------------------------------------------------------------------
// Helpers
// -------------------------------------------------------------------------------------------------

/** A base moment with milliseconds, so stores that drop them are caught. */
const T0 = DateTime.unsafeMake("2026-03-31T10:00:00.123Z")
const plus = (t: DateTime.Utc, millis: number): DateTime.Utc =>
  DateTime.unsafeMake(DateTime.toEpochMillis(t) + millis)
const second = 1_000
const minute = 60 * second
const hour = 60 * minute
const day = 24 * hour

/** Values with every `DateTime` as its ISO text: equal to the millisecond, and readable when not. */
export const plain = (value: unknown): unknown => {
  if (DateTime.isDateTime(value)) return DateTime.formatIso(value)
  if (Array.isArray(value)) return value.map(plain)
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]))
  return value
}

const uuid = Effect.flatMap(Crypto.Crypto, (c) => c.uuid)

let merchantCount = 0
/** A fresh merchant, so no test sees another's data. */
export const freshMerchant = (input: Partial<MerchantInput> = {}) =>
  Effect.flatMap(Seed, (seed) => seed.merchant({ name: `Contract merchant ${++merchantCount}`, ...input }))

export const tenantOf = (merchant: Store.Merchant, environment: Ids.Environment = "test"): Ids.Tenant => ({
  merchantId: merchant.id,
  environment
})

/** A unique phone number. */
const freshPhone = Effect.map(uuid, (id) => `+960 ${id}`)

/** A complete mandate of `tenant`, `INITIATED` around `T0`, with `overrides`. */
const newMandate = (tenant: Ids.Tenant, overrides: Partial<Mandate.Mandate> = {}) =>
  Effect.map(
    Effect.all([uuid, uuid]),
    ([id, ref]): Mandate.Mandate => ({
      id: id as Ids.MandateId,
      merchantId: tenant.merchantId,
      environment: tenant.environment,
      reference: `ref-${ref}`,
      status: "INITIATED",
      title: "Contract mandate",
      description: null,
      perChargeCap: 10_000,
      periodCap: null,
      period: null,
      periodKey: null,
      periodCharged: 0,
      returnUrl: null,
      customerId: null,
      setupExpiresAt: plus(T0, day),
      expiresAt: plus(T0, 365 * day),
      approvedAt: null,
      revokedAt: null,
      revokedBy: null,
      declinedAt: null,
      expiredAt: null,
      createdAt: T0,
      ...overrides
    })
  )

const insertMandate = (tenant: Ids.Tenant, overrides: Partial<Mandate.Mandate> = {}) =>
  Effect.gen(function* () {
    const m = yield* newMandate(tenant, overrides)
    yield* (yield* Store.MandatesStore).insert(m)
    return m
  })

class Rollback extends Data.TaggedError("Rollback") {}

/** Runs `body` in a transaction that is then rolled back, so the test leaves nothing behind. */
const rolledBack = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const tx = yield* Store.Transactor
    // Anything but the rollback itself (a failed expectation, an error) still fails the test.
    yield* tx.withTransaction(Effect.zipRight(body, Effect.fail(new Rollback()))).pipe(
      Effect.catchIf(
        (e): e is Rollback => e instanceof Rollback,
        () => Effect.void
      )
    )
  })

const ids = (ms: ReadonlyArray<{ readonly id: string }>) => ms.map((m) => m.id)

/** The far past that only the global-method tests use. */
const Era = DateTime.unsafeMake("1950-06-15T00:00:00Z")

/** Whether `exit` is a defect: what a store does when a statement breaks a constraint of the schema. */
const isDefect = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) && Cause.isDie(exit.cause)

const freshQrid = Effect.flatMap(Crypto.Crypto, (c) =>
  Effect.map(c.bytes(QrScheme.QridBytes), QrScheme.makeQrid)
)

/** A fresh merchant with one outlet. */
export const merchantWithOutlet = (input: Partial<MerchantInput> = {}) =>
  Effect.gen(function* () {
    const merchant = yield* freshMerchant(input)
    const outlet = yield* (yield* Seed).outlet(merchant.id, "Majeedhee Magu")
    return { merchant, outlet, tenant: tenantOf(merchant) }
  })

/**
 * A complete static code of `tenant` at `outletId`, created at `T0`, with `overrides`. The payload is
 * opaque to a store, so it is not a real one here; it holds Thaana, so text is checked to round-trip.
 */
const newQrCode = (tenant: Ids.Tenant, outletId: number, overrides: Partial<QrCode.QrCode> = {}) =>
  Effect.gen(function* () {
    const id = yield* uuid
    const qrid = yield* freshQrid
    const code: QrCode.QrCode = {
      id,
      merchantId: tenant.merchantId,
      environment: tenant.environment,
      outletId,
      type: "STATIC",
      status: "ACTIVE",
      title: "Counter 1",
      description: null,
      amount: null,
      payload: `000201 ${qrid} ބައްޕަ ކެފޭ`,
      qrid,
      reference: `qr-${id}`,
      expiresAt: null,
      deactivatedAt: null,
      createdAt: T0
    }
    return { ...code, ...overrides }
  })

/** What makes a code dynamic: an amount and an expiry. */
const dynamic = (amount = 12_550): Partial<QrCode.QrCode> => ({
  type: "DYNAMIC",
  amount,
  expiresAt: plus(T0, 15 * minute)
})

const insertQrCode = (tenant: Ids.Tenant, outletId: number, overrides: Partial<QrCode.QrCode> = {}) =>
  Effect.gen(function* () {
    const code = yield* newQrCode(tenant, outletId, overrides)
    yield* (yield* Store.QrCodesStore).insert(code)
    return code
  })

/** A payment of `code` by `customerId`, with `fee` out of `amount`. */
const newQrPayment = (
  code: QrCode.QrCode,
  customerId: Ids.CustomerId,
  overrides: Partial<QrCode.Payment> = {}
) =>
  Effect.map(
    uuid,
    (id): QrCode.Payment => ({
      id,
      qrCodeId: code.id,
      qrid: code.qrid,
      merchantId: code.merchantId,
      environment: code.environment,
      outletId: code.outletId,
      customerId,
      amount: 12_550,
      fee: 126,
      netAmount: 12_424,
      amountRefunded: 0,
      reference: code.reference,
      createdAt: T0,
      ...overrides
    })
  )

/** Every byte value, many times over, in an order that is not a pattern a store could mangle unseen. */
const imageBytes = (seed: number, size = 20_000): Uint8Array =>
  Uint8Array.from({ length: size }, (_, i) => (i * 131 + seed * 17 + (i >> 8)) & 255)

export const qrRequest = (outletId: number, overrides: Partial<QrCode.Request> = {}): QrCode.Request => ({
  outletId,
  type: "STATIC",
  amount: null,
  expiresInMinutes: null,
  title: null,
  description: null,
  reference: null,
  ...overrides
})

/** The plan the subscription sessions sell unless told otherwise: 49.90 MVR a month. */
const goldPlan: CheckoutSession.PriceDataRequest = {
  name: "Gold plan ބައްޕަ",
  amount: 4_990,
  interval: "MONTH",
  intervalCount: 1
}

/**
 * A checkout session of `tenant`, opened at `at` (default `T0`) through the model: `SUBSCRIPTION` mode
 * selling `goldPlan` unless told otherwise, with a fresh reference.
 */
const newSession = (
  tenant: Ids.Tenant,
  options: {
    readonly mode?: CheckoutSession.Mode
    readonly at?: DateTime.Utc
    readonly request?: Partial<CheckoutSession.Request>
  } = {}
) =>
  Effect.gen(function* () {
    const mode = options.mode ?? "SUBSCRIPTION"
    const id = yield* uuid
    const request: CheckoutSession.Request = {
      mode,
      reference: `cs-${id}`,
      title: "Contract checkout",
      description: null,
      returnUrl: null,
      amount: mode === "PAYMENT" ? 12_550 : null,
      priceData: mode === "SUBSCRIPTION" ? goldPlan : null,
      ...options.request
    }
    const terms = Either.getOrThrowWith(
      CheckoutSession.validate(request),
      (problems) => new Error(`not a valid session: ${JSON.stringify(problems)}`)
    )
    return CheckoutSession.open(
      { id: id as CheckoutSession.CheckoutSessionId, ...tenant, terms },
      options.at ?? T0
    )
  })

const insertSession = (tenant: Ids.Tenant, options: Parameters<typeof newSession>[1] = {}) =>
  Effect.gen(function* () {
    const session = yield* newSession(tenant, options)
    yield* (yield* Store.CheckoutSessionsStore).insert(session)
    return session
  })

/** A subscription session of `tenant` opened a minute before `at`, and its first payment settled at `at`. */
const activation = (
  tenant: Ids.Tenant,
  customerId: Ids.CustomerId,
  options: { readonly at?: DateTime.Utc; readonly request?: Partial<CheckoutSession.Request> } = {}
) =>
  Effect.gen(function* () {
    const at = options.at ?? plus(T0, minute)
    const opened = yield* newSession(tenant, {
      at: plus(at, -minute),
      ...(options.request !== undefined && { request: options.request })
    })
    const activated = Either.getOrThrowWith(
      Subscription.activate(opened, customerId, at, {
        subscriptionId: (yield* uuid) as Subscription.SubscriptionId,
        invoiceId: (yield* uuid) as Invoice.InvoiceId,
        paymentId: yield* uuid
      }),
      (refusal) => new Error(`not activated: ${refusal}`)
    )
    return { opened, ...activated }
  })

type Activated = Effect.Effect.Success<ReturnType<typeof activation>>

/** The rows an activation writes: the session (opened, then complete), the subscription, invoice 0. */
const storeActivation = (a: Activated, dueAt?: DateTime.Utc | null) =>
  Effect.gen(function* () {
    const sessions = yield* Store.CheckoutSessionsStore
    yield* sessions.insert(a.opened)
    yield* (yield* Store.SubscriptionsStore).insert(
      a.subscription,
      dueAt === undefined ? (Subscription.nextDueAt(a.subscription, a.invoice) ?? null) : dueAt
    )
    yield* (yield* Store.InvoicesStore).insert(a.invoice)
    yield* sessions.update(a.session)
  })

/** A stored subscription of `tenant` paid by `customerId` (see `activation`), due at `dueAt` if given. */
export const subscribe = (
  tenant: Ids.Tenant,
  customerId: Ids.CustomerId,
  options: Parameters<typeof activation>[2] & { readonly dueAt?: DateTime.Utc | null } = {}
) =>
  Effect.gen(function* () {
    const a = yield* activation(tenant, customerId, options)
    yield* storeActivation(a, options.dueAt)
    return a
  })

/** The invoice of period `n` of `sub`, opened at that period's start. */
export const cycleInvoice = (sub: Subscription.Subscription, n: number) =>
  Effect.map(uuid, (id) =>
    Invoice.open(
      sub,
      n,
      Calendar.periodStart(sub.billingCycleAnchor, sub.interval, sub.intervalCount, n),
      id as Invoice.InvoiceId
    )
  )

/** `inv` attempted at `at` and paid. */
const paidAt = (inv: Invoice.Invoice, at: DateTime.Utc, paymentId: string): Invoice.Invoice =>
  Either.getOrThrow(Either.flatMap(Invoice.startAttempt(inv, at), (c) => Invoice.succeed(c, paymentId, at)))

const isoOf = (t: DateTime.Utc | undefined) => t && DateTime.formatIso(t)

// -------------------------------------------------------------------------------------------------
// The suite
// -------------------------------------------------------------------------------------------------

export const suite = (name: string, makeLayer: () => Layer.Layer<AllCorePorts | Seed, unknown>): void => {
  const services = Engine.layer.pipe(
    Layer.provideMerge(MemoryQrImages.layer),
    Layer.provideMerge(makeLayer())
  )

  // The layer is a database and its migrations: the hook budget of the repository's projects (120 s,
  // vitest.shared.ts), which a 2-core machine shared with a CPU hog needs.
  layer(services, { excludeTestServices: true, timeout: "120 seconds" })(`store contract: ${name}`, (it) => {
    describe("merchants and customers", () => {
      it.effect("the seeded merchant, its sandbox payer and a customer are found", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const merchant = yield* freshMerchant({
            city: "Hulhumale",
            mcc: "5812",
            feeBps: 150,
            features: { mandatesLive: true }
          })
          expect(merchant).toMatchObject({
            city: "Hulhumale",
            mcc: "5812",
            feeBps: 150,
            features: { mandatesLive: true, subscriptionsLive: false }
          })
          const merchants = yield* Store.Merchants
          expect(plain(yield* merchants.get(merchant.id))).toEqual(plain(merchant))
          expect(yield* merchants.get((yield* uuid) as Ids.MerchantId)).toBeUndefined()

          const customers = yield* Store.Customers
          const wallet = yield* Wallet.Wallet
          const payer = yield* customers.get(merchant.sandboxPayer)
          expect(payer?.environment).toBe("test")
          expect((yield* wallet.payer(merchant.sandboxPayer))?.balance).toBe(SandboxPayerBalance)

          const phone = yield* freshPhone
          const customer = yield* seed.customer({
            environment: "live",
            phone,
            name: "Aisha",
            balance: 5_000,
            timeZone: "Asia/Kathmandu"
          })
          expect(customer).toMatchObject({ environment: "live", phone, name: "Aisha" })
          expect(plain(yield* customers.get(customer.id))).toEqual(plain(customer))
          expect(plain(yield* customers.findByPhone("live", phone))).toEqual(plain(customer))
          expect(yield* customers.findByPhone("test", phone)).toBeUndefined()
          expect(yield* wallet.payer(customer.id)).toEqual({
            customerId: customer.id,
            environment: "live",
            balance: 5_000,
            limit: null,
            frozen: false,
            blockedByRules: false,
            timeZone: "Asia/Kathmandu"
          })
          expect(yield* wallet.payer((yield* uuid) as Ids.CustomerId)).toBeUndefined()
        })
      )
    })

    describe("mandates", () => {
      it.effect("insert, then find by id and by reference (also locked, and by lockById)", () =>
        Effect.gen(function* () {
          const store = yield* Store.MandatesStore
          const tx = yield* Store.Transactor
          const tenant = tenantOf(yield* freshMerchant())
          const m = yield* insertMandate(tenant, { description: "with a description" })
          expect(plain(yield* store.find(tenant, Ids.lookup(m.id)))).toEqual(plain(m))
          expect(plain(yield* store.find(tenant, Ids.lookup(m.id.toUpperCase())))).toEqual(plain(m))
          expect(plain(yield* store.find(tenant, Ids.lookup(m.reference)))).toEqual(plain(m))
          const locked = yield* tx.withTransaction(store.find(tenant, Ids.lookup(m.id), { forUpdate: true }))
          expect(plain(locked)).toEqual(plain(m))
          expect(plain(yield* tx.withTransaction(store.lockById(m.id)))).toEqual(plain(m))
          expect(yield* store.find(tenant, Ids.lookup(yield* uuid))).toBeUndefined()
          expect(yield* store.find(tenant, Ids.lookup("no-such-reference"))).toBeUndefined()
          expect(yield* store.lockById(yield* uuid)).toBeUndefined()
        })
      )

      it.effect("another merchant's or another environment's mandate is not found", () =>
        Effect.gen(function* () {
          const store = yield* Store.MandatesStore
          const owner = yield* freshMerchant()
          const other = yield* freshMerchant()
          const m = yield* insertMandate(tenantOf(owner))
          for (const tenant of [tenantOf(other), tenantOf(owner, "live"), tenantOf(other, "live")]) {
            expect(yield* store.find(tenant, Ids.lookup(m.id))).toBeUndefined()
            expect(yield* store.find(tenant, Ids.lookup(m.reference))).toBeUndefined()
            expect(yield* store.list(tenant, { limit: 100, offset: 0 })).toEqual([])
          }
          // The customer's side has no tenant: it finds any mandate by id.
          expect((yield* store.lockById(m.id))?.id).toBe(m.id)
        })
      )

      it.effect("a duplicate reference is DuplicateReference; the same reference elsewhere is fine", () =>
        Effect.gen(function* () {
          const store = yield* Store.MandatesStore
          const merchant = yield* freshMerchant()
          const other = yield* freshMerchant()
          const first = yield* insertMandate(tenantOf(merchant))
          const again = yield* newMandate(tenantOf(merchant), { reference: first.reference, title: "Again" })
          const refused = yield* Effect.flip(store.insert(again))
          expect(refused).toBeInstanceOf(Store.DuplicateReference)
          expect(refused).toMatchObject({ _tag: "DuplicateReference", reference: first.reference })
          expect(yield* store.find(tenantOf(merchant), Ids.lookup(again.id))).toBeUndefined()
          expect((yield* store.find(tenantOf(merchant), Ids.lookup(first.reference)))?.id).toBe(first.id)

          const elsewhere = [
            yield* newMandate(tenantOf(other), { reference: first.reference }),
            yield* newMandate(tenantOf(merchant, "live"), { reference: first.reference })
          ]
          for (const m of elsewhere) {
            yield* store.insert(m)
            expect((yield* store.find(m, Ids.lookup(first.reference)))?.id).toBe(m.id)
          }
        })
      )

      it.effect("list is newest first, filters by status and reference, pages by limit and offset", () =>
        Effect.gen(function* () {
          const store = yield* Store.MandatesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const statuses: ReadonlyArray<Mandate.Status> = [
            "INITIATED",
            "ACTIVE",
            "ACTIVE",
            "REVOKED",
            "ACTIVE"
          ]
          const made = yield* Effect.forEach(statuses, (status, i) =>
            newMandate(tenant, {
              status,
              createdAt: plus(T0, (i + 1) * minute),
              customerId: status === "INITIATED" ? null : merchant.sandboxPayer
            })
          )
          // Inserted out of order: the order of a list comes from `createdAt`, not from insertion.
          for (const i of [2, 0, 4, 1, 3]) yield* store.insert(made[i]!)
          yield* insertMandate(tenantOf(yield* freshMerchant()), { createdAt: plus(T0, 3 * minute) })
          yield* insertMandate(tenantOf(merchant, "live"), { createdAt: plus(T0, 3 * minute) })

          const newest = [...made].reverse()
          const list = (filter: Partial<Store.MandateFilter>) =>
            Effect.map(store.list(tenant, { limit: 25, offset: 0, ...filter }), ids)
          expect(yield* list({})).toEqual(ids(newest))
          expect(plain(yield* store.list(tenant, { limit: 25, offset: 0 }))).toEqual(plain(newest))
          expect(yield* list({ status: "ACTIVE" })).toEqual(ids(newest.filter((m) => m.status === "ACTIVE")))
          expect(yield* list({ status: "EXPIRED" })).toEqual([])
          expect(yield* list({ reference: made[3]!.reference })).toEqual([made[3]!.id])
          expect(yield* list({ reference: made[3]!.reference, status: "ACTIVE" })).toEqual([])
          expect(yield* list({ limit: 2, offset: 1 })).toEqual(ids(newest.slice(1, 3)))
          expect(yield* list({ limit: 1, offset: 4 })).toEqual([newest[4]!.id])
          expect(yield* list({ offset: 5 })).toEqual([])
          expect(yield* list({ status: "ACTIVE", limit: 1, offset: 1 })).toEqual([made[2]!.id])
        })
      )

      it.effect("update round-trips every field, to the millisecond and through nulls", () =>
        Effect.gen(function* () {
          const store = yield* Store.MandatesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const m = yield* insertMandate(tenant)
          const bystander = yield* insertMandate(tenant, { createdAt: plus(T0, second) })

          const filled: Mandate.Mandate = {
            ...m,
            status: "SUSPENDED",
            title: "A new title",
            description: "Now with a description",
            perChargeCap: 20_000,
            periodCap: 50_000,
            period: "MONTH",
            periodKey: "2026-03",
            periodCharged: 12_345,
            returnUrl: "https://shop.example/back?x=1",
            customerId: merchant.sandboxPayer,
            setupExpiresAt: plus(T0, day + 456),
            expiresAt: plus(T0, 200 * day + 789),
            approvedAt: plus(T0, hour + 1),
            revokedAt: plus(T0, 2 * hour + 2),
            revokedBy: "SERVICE",
            declinedAt: plus(T0, 3 * hour + 3),
            expiredAt: plus(T0, 4 * hour + 4)
          }
          yield* store.update(filled)
          expect(plain(yield* store.find(tenant, Ids.lookup(m.id)))).toEqual(plain(filled))

          const emptied: Mandate.Mandate = {
            ...filled,
            status: "EXPIRED",
            description: null,
            periodCap: null,
            period: null,
            periodKey: null,
            periodCharged: 0,
            returnUrl: null,
            customerId: null,
            approvedAt: null,
            revokedAt: null,
            revokedBy: null,
            declinedAt: null,
            expiredAt: null
          }
          yield* store.update(emptied)
          expect(plain(yield* store.find(tenant, Ids.lookup(m.id)))).toEqual(plain(emptied))
          expect(plain(yield* store.find(tenant, Ids.lookup(bystander.id)))).toEqual(plain(bystander))
        })
      )

      it.effect("listByCustomer lists the mandates bound to that wallet, newest first", () =>
        Effect.gen(function* () {
          const store = yield* Store.MandatesStore
          const seed = yield* Seed
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const customer = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
          const older = yield* insertMandate(tenant, { status: "ACTIVE", customerId: customer.id })
          const newer = yield* insertMandate(tenant, {
            status: "REVOKED",
            customerId: customer.id,
            createdAt: plus(T0, second)
          })
          yield* insertMandate(tenant, { status: "ACTIVE", customerId: merchant.sandboxPayer })
          yield* insertMandate(tenant)
          expect(ids(yield* store.listByCustomer(customer.id))).toEqual([newer.id, older.id])
          expect(yield* store.listByCustomer((yield* uuid) as Ids.CustomerId)).toEqual([])
        })
      )

      it.effect("claimExpiring claims exactly the due mandates, up to the limit", () =>
        Effect.gen(function* () {
          const store = yield* Store.MandatesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const now = Era
          const base = { createdAt: plus(now, -2 * day), setupExpiresAt: plus(now, -day) }
          const bound = { ...base, customerId: merchant.sandboxPayer }
          yield* rolledBack(
            Effect.gen(function* () {
              const due = [
                yield* insertMandate(tenant, { setupExpiresAt: plus(now, -1), createdAt: base.createdAt }),
                yield* insertMandate(tenant, { setupExpiresAt: now, createdAt: base.createdAt }),
                yield* insertMandate(tenant, { ...bound, status: "ACTIVE", expiresAt: plus(now, -day) }),
                yield* insertMandate(tenant, { ...bound, status: "ACTIVE", expiresAt: now }),
                yield* insertMandate(tenant, { ...bound, status: "SUSPENDED", expiresAt: plus(now, -hour) })
              ]
              // Not due: a link still open, a lifetime still running, and every terminal state.
              yield* insertMandate(tenant, { setupExpiresAt: plus(now, 1), createdAt: base.createdAt })
              yield* insertMandate(tenant, {
                ...base,
                setupExpiresAt: plus(now, hour),
                expiresAt: plus(now, -day)
              })
              yield* insertMandate(tenant, { ...bound, status: "ACTIVE", expiresAt: plus(now, 1) })
              yield* insertMandate(tenant, { ...bound, status: "REVOKED", expiresAt: plus(now, -day) })
              yield* insertMandate(tenant, { ...bound, status: "EXPIRED", expiresAt: plus(now, -day) })
              yield* insertMandate(tenant, { ...base, status: "DECLINED", expiresAt: plus(now, -day) })

              const claimed = yield* store.claimExpiring(now, 100)
              expect(new Set(ids(claimed))).toEqual(new Set(ids(due)))
              expect(claimed.every((m) => Mandate.isDueToExpire(m, now))).toBe(true)
              const some = yield* store.claimExpiring(now, 2)
              expect(some).toHaveLength(2)
              expect(new Set(ids(some)).size).toBe(2)
              for (const id of ids(some)) expect(ids(due)).toContain(id)
              expect(yield* store.claimExpiring(plus(now, -2 * day), 100)).toEqual([])
            })
          )
        })
      )

      it.effect("nextExpiryAt is the earliest setup or lifetime end of a mandate that can still expire", () =>
        Effect.gen(function* () {
          const store = yield* Store.MandatesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const createdAt = plus(Era, -30 * day)
          const bound = { createdAt, customerId: merchant.sandboxPayer }
          yield* rolledBack(
            Effect.gen(function* () {
              const expectNext = (t: DateTime.Utc) =>
                Effect.map(store.nextExpiryAt, (next) =>
                  expect(next && DateTime.formatIso(next)).toBe(DateTime.formatIso(t))
                )
              // Terminal mandates never expire again, however early their dates.
              yield* insertMandate(tenant, { ...bound, status: "REVOKED", expiresAt: plus(Era, -20 * day) })
              yield* insertMandate(tenant, {
                createdAt,
                status: "DECLINED",
                setupExpiresAt: plus(Era, -20 * day)
              })
              const link = yield* insertMandate(tenant, { createdAt, setupExpiresAt: plus(Era, 250) })
              const life = yield* insertMandate(tenant, {
                ...bound,
                status: "ACTIVE",
                expiresAt: plus(Era, 3 * day + 7)
              })
              yield* expectNext(link.setupExpiresAt)
              yield* store.update({ ...link, status: "DECLINED", declinedAt: Era })
              yield* expectNext(life.expiresAt)
              yield* store.update({ ...life, status: "SUSPENDED" })
              yield* expectNext(life.expiresAt)
              yield* store.update({ ...life, status: "EXPIRED", expiredAt: life.expiresAt })
              const next = yield* store.nextExpiryAt
              if (next !== undefined) expect(DateTime.greaterThan(next, life.expiresAt)).toBe(true)
            })
          )
        })
      )
    })

    describe("transactions", () => {
      const ending = {
        fails: () => Effect.fail(new Rollback()),
        dies: () => Effect.dieMessage("boom"),
        "is interrupted": (written: Deferred.Deferred<void>) =>
          Effect.zipRight(Deferred.succeed(written, undefined), Effect.never)
      } as const

      for (const [how, end] of Object.entries(ending)) {
        it.effect(`a transaction that ${how} leaves no trace in any repository or the wallet`, () =>
          Effect.gen(function* () {
            const seed = yield* Seed
            const tx = yield* Store.Transactor
            const store = yield* Store.MandatesStore
            const charges = yield* Store.ChargesStore
            const challenges = yield* Store.ChallengesStore
            const idempotency = yield* Idempotency.IdempotencyStore
            const outbox = yield* Events.Outbox
            const notifications = yield* Notifications.Notifications
            const wallet = yield* Wallet.Wallet
            const merchant = yield* freshMerchant()
            const tenant = tenantOf(merchant)
            const payer = merchant.sandboxPayer
            const scope: Idempotency.Scope = {
              ...tenant,
              method: "POST",
              path: "/mandates",
              key: yield* uuid
            }
            const feeBefore = yield* seed.feeBalance("test")

            const m = yield* newMandate(tenant, { status: "ACTIVE", customerId: payer })
            const chargeId = yield* uuid
            const challenge = Approval.issue({
              id: (yield* uuid) as Ids.ChallengeId,
              subjectKind: "mandate",
              subjectId: m.id,
              customerId: payer,
              environment: "test",
              codeHash: "0".repeat(64),
              now: T0
            })
            const eventId = `evt_${(yield* uuid).replaceAll("-", "")}`
            const notificationId = yield* uuid
            const transfer: Wallet.Transfer = {
              id: `contract:${yield* uuid}`,
              environment: "test",
              payer,
              merchant: merchant.id,
              amount: 1_000 as Wallet.Transfer["amount"],
              fee: 10 as Wallet.Transfer["fee"],
              memo: "rolled back"
            }
            const written = yield* Deferred.make<void>()
            const fiber = yield* Effect.fork(
              tx.withTransaction(
                Effect.gen(function* () {
                  yield* store.insert(m)
                  yield* charges.insert({
                    id: chargeId,
                    mandateId: m.id,
                    merchantId: merchant.id,
                    environment: "test",
                    customerId: payer,
                    amount: 1_000,
                    description: "rolled back",
                    reference: m.reference,
                    fee: 10,
                    netAmount: 990,
                    amountRefunded: 0,
                    periodKey: "2026-03",
                    periodCharged: 0,
                    createdAt: T0
                  })
                  yield* challenges.insert(challenge)
                  expect(yield* idempotency.claim(scope, "fingerprint", T0)).toEqual({ _tag: "Claimed" })
                  yield* idempotency.complete(scope, { status: 201, headers: {}, body: "{}" })
                  yield* outbox.append(
                    Events.make({
                      id: eventId,
                      type: "mandate.activated",
                      merchantId: merchant.id,
                      environment: "test",
                      now: T0,
                      object: Events.mandateObject(m)
                    })
                  )
                  yield* notifications.send({
                    id: notificationId,
                    customerId: payer,
                    environment: "test",
                    kind: "mandate.approved",
                    title: "rolled back",
                    body: "rolled back",
                    data: {},
                    createdAt: T0
                  })
                  yield* wallet.transfer(transfer)
                  // Inside, the transaction sees its own writes.
                  expect((yield* store.find(tenant, Ids.lookup(m.id)))?.id).toBe(m.id)
                  expect((yield* wallet.payer(payer))?.balance).toBe(SandboxPayerBalance - 1_000)
                  return yield* end(written)
                })
              )
            )
            if (how === "is interrupted") {
              yield* Deferred.await(written)
              yield* Fiber.interrupt(fiber)
            }
            const exit = yield* Fiber.await(fiber)
            expect(Exit.isFailure(exit)).toBe(true)

            expect(yield* store.find(tenant, Ids.lookup(m.id))).toBeUndefined()
            expect(yield* store.lockById(m.id)).toBeUndefined()
            expect(yield* charges.listByMandate(m.id)).toEqual([])
            expect(yield* challenges.lock(challenge.id)).toBeUndefined()
            // The claim went with the rest: the key is free again.
            expect(yield* tx.withTransaction(idempotency.claim(scope, "fingerprint", T0))).toEqual({
              _tag: "Claimed"
            })
            expect((yield* seed.events).some((e) => e.envelope.id === eventId)).toBe(false)
            expect((yield* notifications.list(payer)).some((n) => n.id === notificationId)).toBe(false)
            expect((yield* wallet.payer(payer))?.balance).toBe(SandboxPayerBalance)
            expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(0)
            expect(yield* seed.feeBalance("test")).toBe(feeBefore)
            expect(yield* seed.ledgerTotal).toBe(0)
            // The transfer id was forgotten too: the same transfer now moves money.
            yield* wallet.transfer(transfer)
            expect((yield* wallet.payer(payer))?.balance).toBe(SandboxPayerBalance - 1_000)
          })
        )
      }

      it.effect("a mandate found forUpdate stays locked until the transaction ends: no update is lost", () =>
        Effect.gen(function* () {
          const tx = yield* Store.Transactor
          const store = yield* Store.MandatesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const m = yield* insertMandate(tenant, { status: "ACTIVE", customerId: merchant.sandboxPayer })
          // Read, wait (so the others run), write: without the lock, increments overwrite each other.
          const increment = (byLock: boolean) =>
            tx.withTransaction(
              Effect.gen(function* () {
                const found = byLock
                  ? yield* store.lockById(m.id)
                  : yield* store.find(tenant, Ids.lookup(m.id), { forUpdate: true })
                yield* Effect.sleep("2 millis")
                yield* store.update({ ...found!, periodCharged: found!.periodCharged + 100 })
              })
            )
          yield* Effect.all(
            Array.from({ length: 10 }, (_, i) => increment(i % 2 === 0)),
            { concurrency: "unbounded" }
          )
          expect((yield* store.find(tenant, Ids.lookup(m.id)))?.periodCharged).toBe(1_000)
        })
      )

      it.effect("another transaction's uncommitted writes are never seen", () =>
        Effect.gen(function* () {
          const tx = yield* Store.Transactor
          const store = yield* Store.MandatesStore
          const tenant = tenantOf(yield* freshMerchant())
          const m = yield* newMandate(tenant)
          const written = yield* Deferred.make<void>()
          const writer = yield* Effect.fork(
            tx.withTransaction(
              Effect.gen(function* () {
                yield* store.insert(m)
                yield* Deferred.succeed(written, undefined)
                yield* Effect.sleep("20 millis")
                return yield* new Rollback()
              })
            )
          )
          yield* Deferred.await(written)
          // While the writer is open (or after it rolled back), nobody else sees its row.
          expect(yield* store.find(tenant, Ids.lookup(m.id))).toBeUndefined()
          expect(yield* store.list(tenant, { limit: 10, offset: 0 })).toEqual([])
          expect(Exit.isFailure(yield* Fiber.await(writer))).toBe(true)
          expect(yield* store.find(tenant, Ids.lookup(m.id))).toBeUndefined()
        })
      )

      it.effect("nested transactions join the outer one and commit with it", () =>
        Effect.gen(function* () {
          const tx = yield* Store.Transactor
          const store = yield* Store.MandatesStore
          const tenant = tenantOf(yield* freshMerchant())
          const a = yield* newMandate(tenant)
          const b = yield* newMandate(tenant)
          const outcome = yield* tx
            .withTransaction(
              Effect.gen(function* () {
                yield* tx.withTransaction(store.insert(a))
                yield* store.insert(b)
                return yield* new Rollback()
              })
            )
            .pipe(Effect.either)
          expect(Either.isLeft(outcome)).toBe(true)
          // The inner transaction had "succeeded", but it was part of the outer one.
          expect(yield* store.find(tenant, Ids.lookup(a.id))).toBeUndefined()
          yield* tx.withTransaction(Effect.zipRight(tx.withTransaction(store.insert(a)), store.insert(b)))
          expect(ids(yield* store.list(tenant, { limit: 10, offset: 0 })).sort()).toEqual([a.id, b.id].sort())
        })
      )
    })

    describe("charges and challenges", () => {
      it.effect("charges: insert, then listByMandate newest first", () =>
        Effect.gen(function* () {
          const charges = yield* Store.ChargesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const m = yield* insertMandate(tenant, { status: "ACTIVE", customerId: merchant.sandboxPayer })
          const other = yield* insertMandate(tenant, { status: "ACTIVE", customerId: merchant.sandboxPayer })
          const charge = (mandate: Mandate.Mandate, i: number) =>
            Effect.map(
              uuid,
              (id): Mandate.Charge => ({
                id,
                mandateId: mandate.id,
                merchantId: merchant.id,
                environment: "test",
                customerId: merchant.sandboxPayer,
                amount: 1_000 + i,
                description: `charge ${i}`,
                reference: `charge-ref-${i}`,
                fee: 10,
                netAmount: 990 + i,
                amountRefunded: 0,
                periodKey: "2026-03",
                periodCharged: 1_000 * i,
                createdAt: plus(T0, i * second + i)
              })
            )
          const made = yield* Effect.forEach([1, 2, 3], (i) => charge(m, i))
          for (const i of [1, 2, 0]) yield* charges.insert(made[i]!)
          yield* charges.insert(yield* charge(other, 4))
          expect(plain(yield* charges.listByMandate(m.id))).toEqual(plain([...made].reverse()))
          expect(yield* charges.listByMandate(yield* uuid)).toEqual([])
        })
      )

      it.effect("charges: listByMandates gives each mandate's newest, at most n each, in one go", () =>
        Effect.gen(function* () {
          const charges = yield* Store.ChargesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const mandates = yield* Effect.forEach([0, 1, 2], () =>
            insertMandate(tenant, { status: "ACTIVE", customerId: merchant.sandboxPayer })
          )
          const made: Array<Mandate.Charge> = []
          for (const [k, mandate] of mandates.entries())
            for (let i = 0; i < 3 - k; i++) {
              const c: Mandate.Charge = {
                id: yield* uuid,
                mandateId: mandate.id,
                merchantId: merchant.id,
                environment: "test",
                customerId: merchant.sandboxPayer,
                amount: 100 + i,
                description: "c",
                reference: "r",
                fee: 1,
                netAmount: 99 + i,
                amountRefunded: 0,
                periodKey: "2026-03",
                periodCharged: 100 * (i + 1),
                createdAt: plus(T0, i * second)
              }
              made.push(c)
              yield* charges.insert(c)
            }
          const newest = (mandate: Mandate.Mandate, n: number) =>
            made
              .filter((c) => c.mandateId === mandate.id)
              .reverse()
              .slice(0, n)
          const [a, b, c] = mandates as [Mandate.Mandate, Mandate.Mandate, Mandate.Mandate]
          const got = yield* charges.listByMandates([a.id, b.id.toUpperCase(), c.id, yield* uuid, "x"], 2)
          const of = (m: Mandate.Mandate) => plain(got.filter((x) => x.mandateId === m.id))
          expect(of(a)).toEqual(plain(newest(a, 2)))
          expect(of(b)).toEqual(plain(newest(b, 2)))
          expect(of(c)).toEqual(plain(newest(c, 2)))
          expect(got).toHaveLength(5)
          expect(yield* charges.listByMandates([], 5)).toEqual([])
          expect((yield* charges.listByMandates([a.id], 1)).map((x) => x.id)).toEqual([newest(a, 1)[0]!.id])
        })
      )

      it.effect("challenges: insert, lock and update round-trip", () =>
        Effect.gen(function* () {
          const challenges = yield* Store.ChallengesStore
          const merchant = yield* freshMerchant()
          const challenge = Approval.issue({
            id: (yield* uuid) as Ids.ChallengeId,
            subjectKind: "mandate",
            subjectId: yield* uuid,
            customerId: merchant.sandboxPayer,
            environment: "test",
            codeHash: "ab".repeat(32),
            now: T0
          })
          yield* challenges.insert(challenge)
          expect(plain(yield* challenges.lock(challenge.id))).toEqual(plain(challenge))
          const used: Approval.Challenge = { ...challenge, attempts: 3, usedAt: plus(T0, minute + 5) }
          yield* challenges.update(used)
          expect(plain(yield* challenges.lock(challenge.id))).toEqual(plain(used))
          expect(yield* challenges.lock((yield* uuid) as Ids.ChallengeId)).toBeUndefined()
        })
      )
    })

    describe("wallet", () => {
      it.effect("refuses in decideTransfer order and moves nothing when it refuses", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const wallet = yield* Wallet.Wallet
          const merchant = yield* freshMerchant()
          const customer = yield* seed.customer({
            environment: "test",
            phone: yield* freshPhone,
            balance: 5_000
          })
          const feeBefore = yield* seed.feeBalance("test")
          const transfer: Wallet.Transfer = {
            id: `contract:${yield* uuid}`,
            environment: "test",
            payer: customer.id,
            merchant: merchant.id,
            amount: 6_000 as Wallet.Transfer["amount"],
            fee: 60 as Wallet.Transfer["fee"],
            memo: "refusals"
          }
          const steps: ReadonlyArray<readonly [PayerPatch, Wallet.RefusalReason]> = [
            [{ frozen: true, blockedByRules: true, limit: 1_000 }, "wallet-frozen"],
            [{ frozen: false }, "blocked-by-rules"],
            [{ blockedByRules: false }, "wallet-limit"],
            [{ limit: null }, "insufficient-balance"]
          ]
          for (const [patch, reason] of steps) {
            const account = yield* seed.setPayer(customer.id, patch)
            expect(plain(yield* wallet.payer(customer.id))).toEqual(plain(account))
            expect(Wallet.decideTransfer(account, transfer.amount)).toBe(reason)
            const refused = yield* Effect.flip(wallet.transfer(transfer))
            expect(refused).toMatchObject({ _tag: "TransferRefused", reason })
            expect((yield* wallet.payer(customer.id))?.balance).toBe(5_000)
            expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(0)
            expect(yield* seed.feeBalance("test")).toBe(feeBefore)
          }
          // A refusal does not use up the transfer id.
          yield* seed.setPayer(customer.id, { balance: 6_000 })
          expect((yield* wallet.transfer(transfer)).netAmount).toBe(5_940)
          expect((yield* wallet.payer(customer.id))?.balance).toBe(0)
          expect(yield* seed.ledgerTotal).toBe(0)
        })
      )

      it.effect("a transfer writes balanced entries, is idempotent on its id, and conserves money", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const wallet = yield* Wallet.Wallet
          const merchant = yield* freshMerchant()
          const customer = yield* seed.customer({
            environment: "test",
            phone: yield* freshPhone,
            balance: 50_000
          })
          const feeBefore = yield* seed.feeBalance("test")
          const transfer: Wallet.Transfer = {
            id: `contract:${yield* uuid}`,
            environment: "test",
            payer: customer.id,
            merchant: merchant.id,
            amount: 12_350 as Wallet.Transfer["amount"],
            fee: 124 as Wallet.Transfer["fee"],
            memo: "balanced"
          }
          const receipt = yield* wallet.transfer(transfer)
          expect(receipt).toMatchObject({ id: transfer.id, amount: 12_350, fee: 124, netAmount: 12_226 })
          const moved = {
            payer: (yield* wallet.payer(customer.id))?.balance,
            merchant: yield* seed.merchantBalance(merchant.id, "test"),
            fee: (yield* seed.feeBalance("test")) - feeBefore
          }
          expect(moved).toEqual({ payer: 50_000 - 12_350, merchant: 12_226, fee: 124 })
          expect(yield* seed.merchantBalance(merchant.id, "live")).toBe(0)
          expect(yield* seed.ledgerTotal).toBe(0)

          // The same id again, even with other figures: the first receipt, and nothing moves.
          const again = yield* wallet.transfer({
            ...transfer,
            amount: 999 as Wallet.Transfer["amount"],
            fee: 0 as Wallet.Transfer["fee"]
          })
          expect(plain(again)).toEqual(plain(receipt))
          expect((yield* wallet.payer(customer.id))?.balance).toBe(moved.payer)
          expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(12_226)

          // A new id is a new transfer.
          yield* wallet.transfer({ ...transfer, id: `contract:${yield* uuid}` })
          expect((yield* wallet.payer(customer.id))?.balance).toBe(50_000 - 2 * 12_350)
          expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(2 * 12_226)
          expect(yield* seed.ledgerTotal).toBe(0)
        })
      )

      it.effect("concurrent transfers with one id move money once", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const wallet = yield* Wallet.Wallet
          const merchant = yield* freshMerchant()
          const customer = yield* seed.customer({
            environment: "test",
            phone: yield* freshPhone,
            balance: 10_000
          })
          const transfer: Wallet.Transfer = {
            id: `contract:${yield* uuid}`,
            environment: "test",
            payer: customer.id,
            merchant: merchant.id,
            amount: 1_000 as Wallet.Transfer["amount"],
            fee: 0 as Wallet.Transfer["fee"],
            memo: "once"
          }
          const tx = yield* Store.Transactor
          yield* Effect.all(
            Array.from({ length: 10 }, () => tx.withTransaction(wallet.transfer(transfer))),
            {
              concurrency: "unbounded"
            }
          )
          expect((yield* wallet.payer(customer.id))?.balance).toBe(9_000)
          expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(1_000)
        })
      )
    })

    describe("balance reads", () => {
      /** A transfer of `amount` (fee `fee`) from `payer` to `merchant`, booked at `iso`. */
      const payAt = (
        iso: string,
        merchant: Store.Merchant,
        payer: Ids.CustomerId,
        id: string,
        amount: number,
        fee: number,
        environment: Ids.Environment = "test"
      ) =>
        Effect.flatMap(Wallet.Wallet, (wallet) =>
          wallet.transfer({
            id,
            environment,
            payer,
            merchant: merchant.id,
            amount: amount as Wallet.Transfer["amount"],
            fee: fee as Wallet.Transfer["fee"],
            memo: "balance reads"
          })
        ).pipe(Effect.withClock(Work.makeManualClock(Date.parse(iso)).clock))

      it.effect("movements: newest first, ties by id in byte order, paged by cursor, one tenant's only", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const reads = yield* Balance.LedgerReads
          const merchant = yield* freshMerchant()
          const other = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const payer = yield* seed.customer({
            environment: "test",
            phone: yield* freshPhone,
            balance: 1_000_000
          })
          const livePayer = yield* seed.customer({
            environment: "live",
            phone: yield* freshPhone,
            balance: 1_000_000
          })
          const p = yield* uuid
          // Three at one instant: byte order puts `A` before `B` before `a` (a collation might not).
          const booked: Array<readonly [string, string, number, number]> = [
            ["2026-02-28T18:59:59.999Z", `${p}:early`, 1_000, 10],
            ["2026-02-28T19:00:00.000Z", `${p}:start`, 2_000, 20],
            ["2026-03-01T12:00:00.000Z", `${p}:B`, 3_000, 0],
            ["2026-03-01T12:00:00.000Z", `${p}:a`, 4_000, 40],
            ["2026-03-01T12:00:00.000Z", `${p}:A`, 5_000, 50],
            ["2026-03-01T18:59:59.999Z", `${p}:end`, 6_000, 60],
            ["2026-03-01T19:00:00.000Z", `${p}:next`, 7_000, 70]
          ]
          for (const [iso, id, amount, fee] of booked) yield* payAt(iso, merchant, payer.id, id, amount, fee)
          // Not this tenant's: another merchant's, and this merchant's live ones, at the same moments.
          yield* payAt("2026-03-01T12:00:00.000Z", other, payer.id, `${p}:other`, 9_000, 90)
          yield* payAt("2026-03-01T12:00:00.000Z", merchant, livePayer.id, `${p}:live`, 9_000, 90, "live")

          const newest = [`${p}:next`, `${p}:end`, `${p}:a`, `${p}:B`, `${p}:A`, `${p}:start`, `${p}:early`]
          const all = (yield* reads.movements(tenant, { limit: 100 }))!
          expect(all.map((m) => m.transferId)).toEqual(newest)
          const byId = new Map(booked.map(([iso, id, amount, fee]) => [id, { iso, amount, fee }]))
          for (const m of all) {
            const b = byId.get(m.transferId)!
            expect({ kind: m.kind, net: m.net, fee: m.fee, at: DateTime.formatIso(m.createdAt) }).toEqual({
              kind: "payment",
              net: b.amount - b.fee,
              fee: b.fee,
              at: b.iso
            })
          }
          expect(yield* reads.available(tenant)).toBe(all.reduce((s, m) => s + m.net, 0))
          expect(yield* reads.available(tenantOf(merchant, "live"))).toBe(9_000 - 90)
          expect(yield* reads.available(tenantOf(yield* freshMerchant()))).toBe(0)

          // Pages of 2 through the ties give every movement once, in order.
          const paged: Array<string> = []
          let after: string | undefined
          for (;;) {
            const page = (yield* reads.movements(tenant, { startingAfter: after, limit: 2 }))!
            paged.push(...page.map((m) => m.transferId))
            if (page.length < 2) break
            after = page[1]!.transferId
          }
          expect(paged).toEqual(newest)
          expect((yield* reads.movements(tenant, { startingAfter: `${p}:early`, limit: 5 }))!).toEqual([])
          // Another tenant's transfer, or none at all, is no cursor.
          for (const cursor of [`${p}:other`, `${p}:live`, `${p}:missing`, "nul\u0000"])
            expect(yield* reads.movements(tenant, { startingAfter: cursor, limit: 5 })).toBeUndefined()
          expect((yield* reads.movements(tenantOf(other), { limit: 5 }))!.map((m) => m.transferId)).toEqual([
            `${p}:other`
          ])
        })
      )

      it.effect("between: a Maldives day, 19:00 UTC to 19:00 UTC, oldest first", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const reads = yield* Balance.LedgerReads
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const payer = yield* seed.customer({
            environment: "test",
            phone: yield* freshPhone,
            balance: 100_000
          })
          const p = yield* uuid
          for (const [iso, id] of [
            ["2026-02-28T18:59:59.999Z", "before"],
            ["2026-02-28T19:00:00.000Z", "first"],
            ["2026-03-01T18:59:59.999Z", "last"],
            ["2026-03-01T19:00:00.000Z", "after"]
          ] as const)
            yield* payAt(iso, merchant, payer.id, `${p}:${id}`, 1_000, 10)
          const day = Either.getOrThrow(Balance.day("2026-03-01"))
          const inDay = yield* reads.between(tenant, day.from, day.to)
          expect(inDay.map((m) => m.transferId)).toEqual([`${p}:first`, `${p}:last`])
          expect(yield* reads.between(tenantOf(yield* freshMerchant()), day.from, day.to)).toEqual([])
        })
      )
    })

    describe("idempotency store", () => {
      const scopeFor = (merchant: Store.Merchant) =>
        Effect.map(
          uuid,
          (key): Idempotency.Scope => ({
            merchantId: merchant.id,
            environment: "test",
            method: "POST",
            path: "/mandates",
            key
          })
        )

      it.effect("claim, complete, hold and replay, inside transactions", () =>
        Effect.gen(function* () {
          const store = yield* Idempotency.IdempotencyStore
          const tx = yield* Store.Transactor
          const claim = (scope: Idempotency.Scope, fingerprint: string, at: DateTime.Utc) =>
            tx.withTransaction(store.claim(scope, fingerprint, at))
          const merchant = yield* freshMerchant()
          const scope = yield* scopeFor(merchant)
          const response: Idempotency.StoredResponse = {
            status: 201,
            headers: { "content-type": "application/json", location: "/mandates/1" },
            body: '{"id":"1","status":"ACTIVE"}'
          }
          yield* tx.withTransaction(
            Effect.gen(function* () {
              expect(yield* store.claim(scope, "fp-1", T0)).toEqual({ _tag: "Claimed" })
              yield* store.complete(scope, response)
            })
          )
          const later = plus(T0, second)
          const held = yield* claim(scope, "fp-1", later)
          expect(held._tag).toBe("Held")
          const record = held._tag === "Held" ? held.record : undefined
          expect(plain(record)).toEqual(plain({ scope, fingerprint: "fp-1", response, createdAt: T0 }))
          expect(Idempotency.decide(record, "fp-1", later)).toEqual({ _tag: "Replay", response })
          expect(Idempotency.decide(record, "fp-2", later)).toEqual({ _tag: "Mismatch" })

          // Every part of the scope separates keys.
          const other = yield* freshMerchant()
          for (const s of [
            { ...scope, path: "/mandates/x/charges" },
            { ...scope, method: "PUT" },
            { ...scope, environment: "live" as const },
            { ...scope, merchantId: other.id },
            { ...scope, key: yield* uuid }
          ])
            expect(yield* claim(s, "fp-1", T0)).toEqual({ _tag: "Claimed" })

          // A claim whose transaction failed leaves nothing behind, so the client may retry.
          const failed = yield* scopeFor(merchant)
          const exit = yield* Effect.exit(
            tx.withTransaction(Effect.zipRight(store.claim(failed, "fp-1", T0), Effect.fail("boom")))
          )
          expect(Exit.isFailure(exit)).toBe(true)
          expect(yield* claim(failed, "fp-2", later)).toEqual({ _tag: "Claimed" })
        })
      )

      it.effect("an expired record is replaced, and the replacement is what later claims hold", () =>
        Effect.gen(function* () {
          const store = yield* Idempotency.IdempotencyStore
          const tx = yield* Store.Transactor
          const merchant = yield* freshMerchant()
          const scope = yield* scopeFor(merchant)
          yield* tx.withTransaction(
            Effect.zipRight(
              store.claim(scope, "fp", T0),
              store.complete(scope, { status: 200, headers: {}, body: "{}" })
            )
          )
          const expiredAt = plus(T0, Idempotency.RetentionHours * hour)
          yield* tx.withTransaction(
            Effect.gen(function* () {
              const held = yield* store.claim(scope, "fp-new", expiredAt)
              expect(held._tag === "Held" && Idempotency.decide(held.record, "fp-new", expiredAt)).toEqual({
                _tag: "Proceed"
              })
              yield* store.replace(scope, "fp-new", expiredAt)
            })
          )
          const again = yield* tx.withTransaction(store.claim(scope, "fp-new", expiredAt))
          expect(again._tag === "Held" ? plain(again.record) : again).toEqual(
            plain({ scope, fingerprint: "fp-new", response: null, createdAt: expiredAt })
          )
        })
      )

      it.effect("purge deletes exactly the records past the retention", () =>
        Effect.gen(function* () {
          const store = yield* Idempotency.IdempotencyStore
          const tx = yield* Store.Transactor
          const merchant = yield* freshMerchant()
          const t = (days: number) => plus(DateTime.unsafeMake("1950-01-01T00:00:00Z"), days * day)
          // Clear what an earlier, interrupted run may have left in the era.
          yield* store.purge(t(10))
          const old = yield* scopeFor(merchant)
          const young = yield* scopeFor(merchant)
          yield* tx.withTransaction(store.claim(old, "fp", t(0)))
          yield* tx.withTransaction(
            Effect.zipRight(
              store.claim(young, "fp", t(1)),
              store.complete(young, { status: 201, headers: {}, body: "{}" })
            )
          )
          expect(yield* store.purge(t(3) /* exactly 72 h after `old` */)).toBe(1)
          expect(yield* tx.withTransaction(store.claim(old, "fp", t(3)))).toEqual({ _tag: "Claimed" })
          const kept = yield* tx.withTransaction(store.claim(young, "fp", t(3)))
          expect(kept._tag === "Held" && kept.record.response).not.toBeNull()
          expect(yield* store.purge(t(10))).toBe(2)
        })
      )
    })

    describe("outbox and notifications", () => {
      it.effect("appended events are recorded, oldest first, numbered per subject", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const outbox = yield* Events.Outbox
          const merchant = yield* freshMerchant()
          const m = yield* newMandate(tenantOf(merchant))
          const event = (type: Events.Type, at: DateTime.Utc) =>
            Effect.map(uuid, (id) =>
              Events.make({
                id: `evt_${id.replaceAll("-", "")}`,
                type,
                merchantId: merchant.id,
                environment: "test",
                now: at,
                object: Events.mandateObject(m)
              })
            )
          const first = yield* event("mandate.activated", T0)
          const second_ = yield* event("mandate.revoked", plus(T0, second))
          yield* outbox.append(first)
          yield* outbox.append(second_)
          const mine = (yield* seed.events).filter((e) => e.merchantId === merchant.id)
          expect(plain(mine)).toEqual(plain([Events.seal(first, 1), Events.seal(second_, 2)]))
          // Another subject's count starts on its own.
          const other = yield* newMandate(tenantOf(merchant))
          yield* outbox.append(
            Events.make({
              id: `evt_${(yield* uuid).replaceAll("-", "")}`,
              type: "mandate.activated",
              merchantId: merchant.id,
              environment: "test",
              now: T0,
              object: Events.mandateObject(other)
            })
          )
          const all = (yield* seed.events).filter((e) => e.merchantId === merchant.id)
          expect(all.map((e) => [e.subject, e.envelope.sequence])).toEqual([
            [m.id, 1],
            [m.id, 2],
            [other.id, 1]
          ])
        })
      )

      it.effect("notifications are listed per customer, newest first", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const notifications = yield* Notifications.Notifications
          const customer = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
          const other = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
          const notification = (customerId: Ids.CustomerId, at: DateTime.Utc, i: number) =>
            Effect.map(
              uuid,
              (id): Notifications.Notification => ({
                id,
                customerId,
                environment: "test",
                kind: "mandate.charge",
                title: `Notice ${i}`,
                body: `Body ${i}`,
                data: { amount: 100 * i, mandate_id: "m", nested: { ok: true } },
                createdAt: at
              })
            )
          const made = [
            yield* notification(customer.id, plus(T0, 2 * second), 2),
            yield* notification(customer.id, T0, 0),
            yield* notification(customer.id, plus(T0, second), 1)
          ]
          for (const n of made) yield* notifications.send(n)
          yield* notifications.send(yield* notification(other.id, plus(T0, 3 * second), 3))
          expect(plain(yield* notifications.list(customer.id))).toEqual(plain([made[0], made[2], made[1]]))
          expect(yield* notifications.list((yield* uuid) as Ids.CustomerId)).toEqual([])
        })
      )
    })

    describe("QR codes", () => {
      it.effect("outlets: a merchant's own outlet is found, another merchant's or none is not", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const outlets = yield* Store.Outlets
          const { merchant, outlet } = yield* merchantWithOutlet()
          const second = yield* seed.outlet(merchant.id, "Orchid Magu ބައްޕަ")
          const other = yield* merchantWithOutlet()
          expect(outlet).toEqual({ id: outlet.id, merchantId: merchant.id, name: "Majeedhee Magu" })
          expect(Number.isSafeInteger(outlet.id) && outlet.id > 0).toBe(true)
          expect(second.id).not.toBe(outlet.id)
          expect(yield* outlets.find(merchant.id, outlet.id)).toEqual(outlet)
          expect(yield* outlets.find(merchant.id, second.id)).toEqual(second)
          expect(yield* outlets.find(merchant.id, other.outlet.id)).toBeUndefined()
          expect(yield* outlets.find(other.merchant.id, outlet.id)).toBeUndefined()
          for (const id of [0, -1, 2 ** 31, 2 ** 53, 1.5])
            expect(yield* outlets.find(merchant.id, id)).toBeUndefined()
          expect(yield* outlets.find((yield* uuid) as Ids.MerchantId, outlet.id)).toBeUndefined()
        })
      )

      it.effect("insert, then find by id and by reference (also locked), and lockByQrid", () =>
        Effect.gen(function* () {
          const store = yield* Store.QrCodesStore
          const tx = yield* Store.Transactor
          const { outlet, tenant } = yield* merchantWithOutlet()
          const fixed = yield* insertQrCode(tenant, outlet.id, { description: "Till by the door" })
          const timed = yield* insertQrCode(tenant, outlet.id, {
            ...dynamic(),
            title: "ބައްޕަ ކެފޭ",
            reference: "ORDER 7/2026"
          })
          for (const code of [fixed, timed]) {
            expect(plain(yield* store.find(tenant, Ids.lookup(code.id)))).toEqual(plain(code))
            expect(plain(yield* store.find(tenant, Ids.lookup(code.id.toUpperCase())))).toEqual(plain(code))
            expect(plain(yield* store.find(tenant, Ids.lookup(code.reference)))).toEqual(plain(code))
            const locked = yield* tx.withTransaction(
              store.find(tenant, Ids.lookup(code.reference), { forUpdate: true })
            )
            expect(plain(locked)).toEqual(plain(code))
            expect(plain(yield* tx.withTransaction(store.lockByQrid("test", code.qrid)))).toEqual(plain(code))
          }
          expect(yield* store.find(tenant, Ids.lookup(yield* uuid))).toBeUndefined()
          expect(yield* store.find(tenant, Ids.lookup("no-such-reference"))).toBeUndefined()
          expect(yield* store.find(tenant, { _tag: "ById", id: "not-a-uuid" })).toBeUndefined()
          expect(yield* store.lockByQrid("test", yield* freshQrid)).toBeUndefined()
          expect(yield* store.lockByQrid("test", "")).toBeUndefined()
          // Text no database row can hold finds nothing, rather than failing.
          expect(yield* store.find(tenant, Ids.lookup("ORDER\u00007"))).toBeUndefined()
          expect(yield* store.lockByQrid("test", `${fixed.qrid}\u0000`)).toBeUndefined()
        })
      )

      it.effect(
        "another merchant's or environment's code is not found; lockByQrid looks in one environment",
        () =>
          Effect.gen(function* () {
            const store = yield* Store.QrCodesStore
            const owner = yield* merchantWithOutlet()
            const other = yield* merchantWithOutlet()
            const code = yield* insertQrCode(owner.tenant, owner.outlet.id)
            const live = yield* insertQrCode(tenantOf(owner.merchant, "live"), owner.outlet.id)
            for (const tenant of [
              other.tenant,
              tenantOf(owner.merchant, "live"),
              tenantOf(other.merchant, "live")
            ]) {
              expect(yield* store.find(tenant, Ids.lookup(code.id))).toBeUndefined()
              expect(yield* store.find(tenant, Ids.lookup(code.reference))).toBeUndefined()
            }
            expect(yield* store.list(other.tenant, { limit: 100, offset: 0 })).toEqual([])
            expect(ids(yield* store.list(owner.tenant, { limit: 100, offset: 0 }))).toEqual([code.id])
            expect(
              ids(yield* store.list(tenantOf(owner.merchant, "live"), { limit: 100, offset: 0 }))
            ).toEqual([live.id])
            // A scanned qrid has no tenant: it names its code in its own environment, and nowhere else.
            expect((yield* store.lockByQrid("test", code.qrid))?.id).toBe(code.id)
            expect(yield* store.lockByQrid("live", code.qrid)).toBeUndefined()
            expect((yield* store.lockByQrid("live", live.qrid))?.id).toBe(live.id)
            expect(yield* store.lockByQrid("test", live.qrid)).toBeUndefined()
          })
      )

      it.effect("a duplicate reference is DuplicateReference; the same reference elsewhere is fine", () =>
        Effect.gen(function* () {
          const store = yield* Store.QrCodesStore
          const { merchant, outlet, tenant } = yield* merchantWithOutlet()
          const other = yield* merchantWithOutlet()
          const first = yield* insertQrCode(tenant, outlet.id)
          const again = yield* newQrCode(tenant, outlet.id, { reference: first.reference, ...dynamic() })
          const refused = yield* Effect.flip(store.insert(again))
          expect(refused).toBeInstanceOf(Store.DuplicateReference)
          expect(refused).toMatchObject({ _tag: "DuplicateReference", reference: first.reference })
          expect(yield* store.find(tenant, Ids.lookup(again.id))).toBeUndefined()
          expect(yield* store.lockByQrid("test", again.qrid)).toBeUndefined()
          expect((yield* store.find(tenant, Ids.lookup(first.reference)))?.id).toBe(first.id)

          const elsewhere = [
            yield* newQrCode(other.tenant, other.outlet.id, { reference: first.reference }),
            yield* newQrCode(tenantOf(merchant, "live"), outlet.id, { reference: first.reference })
          ]
          for (const code of elsewhere) {
            yield* store.insert(code)
            expect((yield* store.find(code, Ids.lookup(first.reference)))?.id).toBe(code.id)
          }
        })
      )

      it.effect(
        "the schema refuses, as a defect, a reused qrid, another merchant's outlet, a misshapen type",
        () =>
          Effect.gen(function* () {
            const store = yield* Store.QrCodesStore
            const { outlet, tenant } = yield* merchantWithOutlet()
            const other = yield* merchantWithOutlet()
            const taken = yield* insertQrCode(other.tenant, other.outlet.id)
            const refusals: ReadonlyArray<readonly [string, Partial<QrCode.QrCode>]> = [
              ["the qrid of another merchant's code", { qrid: taken.qrid }],
              ["another merchant's outlet", { outletId: other.outlet.id }],
              ["a static code with an amount", { amount: 1_000 }],
              ["a dynamic code below 100 laari", dynamic(99)],
              ["a dynamic code without an amount", { ...dynamic(), amount: null }],
              ["a dynamic code without an expiry", { ...dynamic(), expiresAt: null }],
              ["a static code with an expiry", { expiresAt: plus(T0, minute) }],
              ["an INACTIVE code without deactivatedAt", { status: "INACTIVE" }]
            ]
            for (const [what, overrides] of refusals) {
              const code = yield* newQrCode(tenant, outlet.id, overrides)
              expect(isDefect(yield* Effect.exit(store.insert(code))), what).toBe(true)
              expect(yield* store.find(tenant, Ids.lookup(code.id)), what).toBeUndefined()
            }
            // The smallest dynamic code is fine.
            const smallest = yield* insertQrCode(tenant, outlet.id, dynamic(100))
            expect((yield* store.find(tenant, Ids.lookup(smallest.id)))?.amount).toBe(100)
          })
      )

      it.effect("list is newest first, filters by outlet and type, pages by limit and offset", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const store = yield* Store.QrCodesStore
          const { merchant, outlet: a, tenant } = yield* merchantWithOutlet()
          const b = yield* seed.outlet(merchant.id, "Second outlet")
          const other = yield* merchantWithOutlet()
          const shapes: ReadonlyArray<readonly [Store.Outlet, QrCode.Type]> = [
            [a, "STATIC"],
            [b, "DYNAMIC"],
            [a, "DYNAMIC"],
            [a, "STATIC"],
            [b, "STATIC"]
          ]
          const made = yield* Effect.forEach(shapes, ([outlet, type], i) =>
            newQrCode(tenant, outlet.id, {
              ...(type === "DYNAMIC" ? dynamic(1_000 * (i + 1)) : {}),
              createdAt: plus(T0, (i + 1) * minute)
            })
          )
          // Inserted out of order: the order of a list comes from `createdAt`, not from insertion.
          for (const i of [2, 0, 4, 1, 3]) yield* store.insert(made[i]!)
          // Two created in the same instant: the one inserted later is newer.
          const tieFirst = yield* insertQrCode(tenant, b.id, { createdAt: plus(T0, 10 * minute) })
          const tieSecond = yield* insertQrCode(tenant, b.id, { createdAt: plus(T0, 10 * minute) })
          yield* insertQrCode(other.tenant, other.outlet.id, { createdAt: plus(T0, 3 * minute) })
          yield* insertQrCode(tenantOf(merchant, "live"), a.id, { createdAt: plus(T0, 3 * minute) })

          const newest = [tieSecond, tieFirst, ...[...made].reverse()]
          const list = (filter: Partial<Store.QrCodeFilter>) =>
            Effect.map(store.list(tenant, { limit: 25, offset: 0, ...filter }), ids)
          expect(yield* list({})).toEqual(ids(newest))
          expect(plain(yield* store.list(tenant, { limit: 25, offset: 0 }))).toEqual(plain(newest))
          expect(yield* list({ outletId: a.id })).toEqual(ids(newest.filter((c) => c.outletId === a.id)))
          expect(yield* list({ outletId: b.id })).toEqual(ids(newest.filter((c) => c.outletId === b.id)))
          expect(yield* list({ type: "DYNAMIC" })).toEqual([made[2]!.id, made[1]!.id])
          expect(yield* list({ type: "STATIC" })).toEqual(ids(newest.filter((c) => c.type === "STATIC")))
          expect(yield* list({ outletId: a.id, type: "DYNAMIC" })).toEqual([made[2]!.id])
          expect(yield* list({ outletId: b.id, type: "STATIC", limit: 2, offset: 1 })).toEqual([
            tieFirst.id,
            made[4]!.id
          ])
          expect(yield* list({ limit: 2, offset: 1 })).toEqual(ids(newest.slice(1, 3)))
          expect(yield* list({ limit: 1, offset: 6 })).toEqual([newest[6]!.id])
          expect(yield* list({ offset: 7 })).toEqual([])
          // An outlet that is not the merchant's, or no outlet at all, lists nothing.
          for (const outletId of [other.outlet.id, 0, -1, 2 ** 31, 2 ** 53])
            expect(yield* list({ outletId })).toEqual([])
        })
      )

      it.effect(
        "update changes status, deactivatedAt, title and description, and nothing the payload fixes",
        () =>
          Effect.gen(function* () {
            const store = yield* Store.QrCodesStore
            const { merchant, outlet, tenant } = yield* merchantWithOutlet()
            const elsewhere = yield* (yield* Seed).outlet(merchant.id, "Elsewhere")
            const code = yield* insertQrCode(tenant, outlet.id, dynamic())
            const bystander = yield* insertQrCode(tenant, outlet.id, { createdAt: plus(T0, second) })

            const deactivated: QrCode.QrCode = {
              ...code,
              status: "INACTIVE",
              deactivatedAt: plus(T0, hour + 7),
              title: "Renamed ކެފޭ",
              description: "Now described"
            }
            yield* store.update(deactivated)
            expect(plain(yield* store.find(tenant, Ids.lookup(code.id)))).toEqual(plain(deactivated))
            yield* store.update({ ...deactivated, status: "ACTIVE", deactivatedAt: null, description: null })
            const reactivated = {
              ...deactivated,
              status: "ACTIVE" as const,
              deactivatedAt: null,
              description: null
            }
            expect(plain(yield* store.find(tenant, Ids.lookup(code.id)))).toEqual(plain(reactivated))

            // What the printed payload fixes stays as it was.
            yield* store.update({
              ...reactivated,
              outletId: elsewhere.id,
              amount: 99_999,
              payload: "something else",
              qrid: yield* freshQrid,
              reference: "another-reference",
              expiresAt: plus(T0, day),
              createdAt: plus(T0, day)
            })
            expect(plain(yield* store.find(tenant, Ids.lookup(code.id)))).toEqual(plain(reactivated))

            // An update names its tenant: it cannot reach another merchant's or environment's code.
            for (const other of [tenantOf(yield* freshMerchant()), tenantOf(merchant, "live")]) {
              yield* store.update({ ...reactivated, ...other, title: "Hijacked" })
              expect((yield* store.find(tenant, Ids.lookup(code.id)))?.title).toBe(reactivated.title)
            }
            expect(plain(yield* store.find(tenant, Ids.lookup(bystander.id)))).toEqual(plain(bystander))
          })
      )

      it.effect(
        "images round-trip byte for byte, are found by code id for anyone, and a new one replaces the old",
        () =>
          Effect.gen(function* () {
            const store = yield* Store.QrCodesStore
            const { outlet, tenant } = yield* merchantWithOutlet()
            const code = yield* insertQrCode(tenant, outlet.id)
            const plainCode = yield* insertQrCode(tenant, outlet.id)
            const png = imageBytes(1)
            const saved = Uint8Array.from(png)
            yield* store.saveImage(code, png)
            // The store kept its own copy: the caller may reuse its buffer.
            png.fill(0)
            const read = yield* store.image(code.id)
            expect(read).toBeInstanceOf(Uint8Array)
            expect(read!.length).toBe(saved.length)
            expect(Buffer.from(read!).equals(Buffer.from(saved))).toBe(true)
            // No tenant: the image is served without a key, by the unguessable id.
            expect(Buffer.from((yield* store.image(code.id.toUpperCase()))!).equals(Buffer.from(saved))).toBe(
              true
            )
            // What a reader does to its bytes does not reach the store.
            read!.fill(7)
            expect(Buffer.from((yield* store.image(code.id))!).equals(Buffer.from(saved))).toBe(true)

            const replacement = imageBytes(2, 333)
            yield* store.saveImage(code, replacement)
            expect(Buffer.from((yield* store.image(code.id))!).equals(Buffer.from(replacement))).toBe(true)
            yield* store.saveImage(plainCode, Uint8Array.of(0, 0, 0, 255, 0))
            expect(Array.from((yield* store.image(plainCode.id))!)).toEqual([0, 0, 0, 255, 0])

            expect(yield* store.image(yield* uuid)).toBeUndefined()
            expect(yield* store.image("not-a-uuid")).toBeUndefined()
            expect(yield* store.image("")).toBeUndefined()
          })
      )

      it.effect("payments: insert, then listByCode newest first", () =>
        Effect.gen(function* () {
          const payments = yield* Store.QrPaymentsStore
          const { merchant, outlet, tenant } = yield* merchantWithOutlet()
          const code = yield* insertQrCode(tenant, outlet.id)
          const other = yield* insertQrCode(tenant, outlet.id, dynamic())
          const made = yield* Effect.forEach([1, 2, 3], (i) =>
            newQrPayment(code, merchant.sandboxPayer, {
              amount: 1_000 + i,
              fee: 10 + i,
              netAmount: 990,
              amountRefunded: 0,
              createdAt: plus(T0, i * second + i)
            })
          )
          for (const i of [1, 2, 0]) yield* payments.insert(made[i]!)
          // Two in the same instant: the later insert is newer.
          const tieFirst = yield* newQrPayment(code, merchant.sandboxPayer, { createdAt: plus(T0, minute) })
          const tieSecond = yield* newQrPayment(code, merchant.sandboxPayer, { createdAt: plus(T0, minute) })
          yield* payments.insert(tieFirst)
          yield* payments.insert(tieSecond)
          yield* payments.insert(yield* newQrPayment(other, merchant.sandboxPayer))
          expect(plain(yield* payments.listByCode(code.id))).toEqual(
            plain([tieSecond, tieFirst, ...[...made].reverse()])
          )
          expect((yield* payments.listByCode(code.id.toUpperCase())).length).toBe(5)
          expect((yield* payments.listByCode(other.id)).map((p) => p.qrid)).toEqual([other.qrid])
          expect(yield* payments.listByCode(yield* uuid)).toEqual([])
          expect(yield* payments.listByCode("not-a-uuid")).toEqual([])
        })
      )

      it.effect("the schema refuses, as a defect, a payment that is not its code's or does not add up", () =>
        Effect.gen(function* () {
          const payments = yield* Store.QrPaymentsStore
          const { merchant, outlet, tenant } = yield* merchantWithOutlet()
          const elsewhere = yield* (yield* Seed).outlet(merchant.id, "Elsewhere")
          const code = yield* insertQrCode(tenant, outlet.id)
          const other = yield* merchantWithOutlet()
          const refusals: ReadonlyArray<readonly [string, Partial<QrCode.Payment>]> = [
            ["no such code", { qrCodeId: yield* uuid }],
            ["another qrid", { qrid: yield* freshQrid }],
            ["another merchant", { merchantId: other.merchant.id }],
            ["another environment", { environment: "live" }],
            ["another outlet", { outletId: elsewhere.id }],
            ["fee and net amount that do not add up", { fee: 100, netAmount: 100 }],
            ["a negative fee", { fee: -1, netAmount: 12_551 }],
            ["below 100 laari", { amount: 99, fee: 0, netAmount: 99 }]
          ]
          for (const [what, overrides] of refusals) {
            const payment = yield* newQrPayment(code, merchant.sandboxPayer, overrides)
            expect(isDefect(yield* Effect.exit(payments.insert(payment))), what).toBe(true)
          }
          expect(yield* payments.listByCode(code.id)).toEqual([])
        })
      )

      it.effect("a rolled-back transaction keeps no code, image or payment", () =>
        Effect.gen(function* () {
          const tx = yield* Store.Transactor
          const store = yield* Store.QrCodesStore
          const payments = yield* Store.QrPaymentsStore
          const { merchant, outlet, tenant } = yield* merchantWithOutlet()
          const code = yield* newQrCode(tenant, outlet.id)
          const payment = yield* newQrPayment(code, merchant.sandboxPayer)
          const outcome = yield* tx
            .withTransaction(
              Effect.gen(function* () {
                yield* store.insert(code)
                yield* store.saveImage(code, imageBytes(3))
                yield* payments.insert(payment)
                expect(yield* store.image(code.id)).toBeDefined()
                return yield* new Rollback()
              })
            )
            .pipe(Effect.either)
          expect(Either.isLeft(outcome)).toBe(true)
          expect(yield* store.find(tenant, Ids.lookup(code.id))).toBeUndefined()
          expect(yield* store.lockByQrid("test", code.qrid)).toBeUndefined()
          expect(yield* store.image(code.id)).toBeUndefined()
          expect(yield* payments.listByCode(code.id)).toEqual([])
          // The reference and the qrid are free again.
          yield* store.insert(code)
          expect((yield* store.find(tenant, Ids.lookup(code.reference)))?.id).toBe(code.id)
        })
      )
    })

    describe("checkout sessions", () => {
      it.effect("list: the tenant's sessions newest first, paged; nobody else's", () =>
        Effect.gen(function* () {
          const store = yield* Store.CheckoutSessionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const first = yield* insertSession(tenant, { at: T0 })
          const second = yield* insertSession(tenant, { at: T0 })
          const third = yield* insertSession(tenant, { at: plus(T0, minute) })
          yield* insertSession(tenantOf(yield* freshMerchant()))
          yield* insertSession({ merchantId: merchant.id, environment: "live" })
          const ids = (list: ReadonlyArray<{ readonly id: string }>) => list.map((x) => x.id)
          expect(ids(yield* store.list(tenant, { limit: 10, offset: 0 }))).toEqual([
            third.id,
            second.id,
            first.id
          ])
          expect(ids(yield* store.list(tenant, { limit: 1, offset: 1 }))).toEqual([second.id])
          expect(
            yield* store.list(
              { merchantId: "nope" as Ids.MerchantId, environment: "test" },
              { limit: 10, offset: 0 }
            )
          ).toEqual([])
        })
      )

      it.effect("insert, then find by id (also locked, and by lockById); find takes no reference", () =>
        Effect.gen(function* () {
          const store = yield* Store.CheckoutSessionsStore
          const tx = yield* Store.Transactor
          const tenant = tenantOf(yield* freshMerchant())
          const payment = yield* insertSession(tenant, {
            mode: "PAYMENT",
            request: { description: "Two coffees ބައްޕަ", returnUrl: "https://shop.example/back?order=7" }
          })
          const weekly = yield* insertSession(tenant, {
            at: plus(T0, 456),
            request: {
              reference: `ORDER 7/2026 ${yield* uuid}`,
              priceData: { name: "Fortnightly box", amount: 100, interval: "WEEK", intervalCount: 2 }
            }
          })
          expect(payment.price).toBeNull()
          expect(weekly.price).toEqual({
            name: "Fortnightly box",
            amount: 100,
            interval: "WEEK",
            intervalCount: 2
          })
          for (const s of [payment, weekly]) {
            expect(plain(yield* store.find(tenant, Ids.lookup(s.id)))).toEqual(plain(s))
            expect(plain(yield* store.find(tenant, Ids.lookup(s.id.toUpperCase())))).toEqual(plain(s))
            const locked = yield* tx.withTransaction(
              store.find(tenant, Ids.lookup(s.id), { forUpdate: true })
            )
            expect(plain(locked)).toEqual(plain(s))
            expect(plain(yield* tx.withTransaction(store.lockById(s.id)))).toEqual(plain(s))
            expect(plain(yield* store.lockById(s.id.toUpperCase()))).toEqual(plain(s))
            // By reference too, like every resource a merchant names.
            expect(plain(yield* store.find(tenant, Ids.lookup(s.reference)))).toEqual(plain(s))
          }
          expect(yield* store.find(tenant, Ids.lookup(yield* uuid))).toBeUndefined()
          expect(yield* store.find(tenant, Ids.lookup("not-a-uuid"))).toBeUndefined()
          expect(yield* store.lockById(yield* uuid)).toBeUndefined()
          expect(yield* store.lockById("not-a-uuid")).toBeUndefined()
          expect(yield* store.lockById("")).toBeUndefined()
        })
      )

      it.effect("another merchant's or environment's session is not found; lockById finds any", () =>
        Effect.gen(function* () {
          const store = yield* Store.CheckoutSessionsStore
          const owner = yield* freshMerchant()
          const other = yield* freshMerchant()
          const session = yield* insertSession(tenantOf(owner))
          const live = yield* insertSession(tenantOf(owner, "live"))
          for (const tenant of [tenantOf(other), tenantOf(owner, "live"), tenantOf(other, "live")])
            expect(yield* store.find(tenant, Ids.lookup(session.id))).toBeUndefined()
          expect(yield* store.find(tenantOf(owner), Ids.lookup(live.id))).toBeUndefined()
          expect((yield* store.find(tenantOf(owner, "live"), Ids.lookup(live.id)))?.id).toBe(live.id)
          // The customer's side has no tenant: it finds any session by id.
          expect((yield* store.lockById(session.id))?.id).toBe(session.id)
          expect((yield* store.lockById(live.id))?.id).toBe(live.id)
        })
      )

      it.effect("a duplicate reference is DuplicateReference, in either mode; elsewhere it is fine", () =>
        Effect.gen(function* () {
          const store = yield* Store.CheckoutSessionsStore
          const merchant = yield* freshMerchant()
          const other = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const first = yield* insertSession(tenant)
          for (const mode of ["SUBSCRIPTION", "PAYMENT"] as const) {
            const again = yield* newSession(tenant, {
              mode,
              at: plus(T0, hour),
              request: { reference: first.reference, title: "Again" }
            })
            const refused = yield* Effect.flip(store.insert(again))
            expect(refused).toBeInstanceOf(Store.DuplicateReference)
            expect(refused).toMatchObject({ _tag: "DuplicateReference", reference: first.reference })
            expect(yield* store.find(tenant, Ids.lookup(again.id))).toBeUndefined()
            expect(yield* store.lockById(again.id)).toBeUndefined()
          }
          expect(plain(yield* store.find(tenant, Ids.lookup(first.id)))).toEqual(plain(first))

          for (const elsewhere of [tenantOf(other), tenantOf(merchant, "live")]) {
            const s = yield* newSession(elsewhere, { request: { reference: first.reference } })
            yield* store.insert(s)
            expect(plain(yield* store.find(elsewhere, Ids.lookup(s.id)))).toEqual(plain(s))
          }
        })
      )

      it.effect("the schema refuses, as a defect, a second session with an id already taken", () =>
        Effect.gen(function* () {
          const store = yield* Store.CheckoutSessionsStore
          const tenant = tenantOf(yield* freshMerchant())
          const first = yield* insertSession(tenant)
          const twin = { ...(yield* newSession(tenant, { mode: "PAYMENT" })), id: first.id }
          expect(isDefect(yield* Effect.exit(store.insert(twin)))).toBe(true)
          expect(plain(yield* store.find(tenant, Ids.lookup(first.id)))).toEqual(plain(first))
        })
      )

      it.effect("update changes what the session's life changes, and nothing the merchant asked for", () =>
        Effect.gen(function* () {
          const store = yield* Store.CheckoutSessionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const a = yield* subscribe(tenant, merchant.sandboxPayer, {
            request: { description: "Monthly beans", returnUrl: "https://shop.example/done" }
          })
          const bystander = yield* insertSession(tenant, { at: plus(T0, second) })
          // Completed by the activation, through the store.
          expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(a.session))
          expect(a.session).toMatchObject({ status: "COMPLETE", subscriptionId: a.subscription.id })

          const filled: CheckoutSession.CheckoutSession = {
            ...a.session,
            status: "CANCELLED",
            completedAt: plus(T0, hour + 1),
            cancelledAt: plus(T0, 2 * hour + 2),
            expiredAt: plus(T0, 3 * hour + 3)
          }
          yield* store.update(filled)
          expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(filled))

          const emptied: CheckoutSession.CheckoutSession = {
            ...filled,
            status: "OPEN",
            customerId: null,
            paymentId: null,
            subscriptionId: null,
            completedAt: null,
            cancelledAt: null,
            expiredAt: null
          }
          yield* store.update(emptied)
          expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(emptied))
          expect(plain(emptied)).toEqual(plain(a.opened))

          const expired = CheckoutSession.expire(emptied, emptied.expiresAt)
          expect(expired.status).toBe("EXPIRED")
          yield* store.update(expired)
          expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(expired))

          // What the merchant asked for, and when, stays as it was.
          yield* store.update({
            ...expired,
            mode: "PAYMENT",
            reference: "another-reference",
            title: "Another title",
            description: null,
            returnUrl: "https://elsewhere.example/",
            amount: 99_999,
            price: null,
            expiresAt: plus(T0, 7 * day),
            createdAt: plus(T0, day)
          })
          expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(expired))

          // An update names its tenant: it cannot reach another merchant's or environment's session.
          for (const other of [tenantOf(yield* freshMerchant()), tenantOf(merchant, "live")]) {
            yield* store.update({ ...expired, ...other, status: "CANCELLED", cancelledAt: T0 })
            expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(expired))
          }
          // An update of a session never inserted writes nothing.
          const ghost = yield* newSession(tenant)
          yield* store.update({ ...ghost, status: "CANCELLED", cancelledAt: T0 })
          expect(yield* store.lockById(ghost.id)).toBeUndefined()
          expect(plain(yield* store.find(tenant, Ids.lookup(bystander.id)))).toEqual(plain(bystander))
        })
      )

      it.effect("claimExpiring claims exactly the OPEN sessions at or past expiresAt, up to the limit", () =>
        Effect.gen(function* () {
          const store = yield* Store.CheckoutSessionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const now = Era
          // Opened `millis` before `now`: it expires 24 hours later.
          const openedAgo = (millis: number, options: Parameters<typeof newSession>[1] = {}) =>
            insertSession(tenant, { ...options, at: plus(now, -millis) })
          yield* rolledBack(
            Effect.gen(function* () {
              const due = [
                yield* openedAgo(25 * hour),
                yield* openedAgo(24 * hour),
                yield* openedAgo(72 * hour, { mode: "PAYMENT" }),
                yield* insertSession(tenantOf(yield* freshMerchant(), "live"), { at: plus(now, -30 * hour) })
              ]
              // Not due: a session with time left, and every terminal one, however long past its expiry.
              yield* openedAgo(24 * hour - 1)
              yield* openedAgo(hour)
              const cancelled = yield* openedAgo(48 * hour)
              yield* store.update(
                Either.getOrThrow(CheckoutSession.cancel(cancelled, plus(cancelled.createdAt, 1)))
              )
              const expired = yield* openedAgo(48 * hour)
              yield* store.update(CheckoutSession.expire(expired, plus(expired.expiresAt, 1)))
              const a = yield* activation(tenant, merchant.sandboxPayer, { at: plus(now, -47 * hour) })
              yield* storeActivation(a)

              const claimed = yield* store.claimExpiring(now, 100)
              const byId = (xs: ReadonlyArray<CheckoutSession.CheckoutSession>) =>
                [...xs].sort((x, y) => x.id.localeCompare(y.id))
              expect(plain(byId(claimed))).toEqual(plain(byId(due)))
              expect(claimed.every((s) => CheckoutSession.isDueToExpire(s, now))).toBe(true)
              const some = yield* store.claimExpiring(now, 2)
              expect(some).toHaveLength(2)
              expect(new Set(ids(some)).size).toBe(2)
              for (const id of ids(some)) expect(ids(due)).toContain(id)
              expect(yield* store.claimExpiring(plus(now, -3 * day), 100)).toEqual([])
              // Once expired, a session is not claimed again.
              yield* store.update(CheckoutSession.expire(due[0]!, now))
              expect(new Set(ids(yield* store.claimExpiring(now, 100)))).toEqual(new Set(ids(due.slice(1))))
            })
          )
        })
      )

      it.effect("nextExpiryAt is the earliest expiresAt of an OPEN session", () =>
        Effect.gen(function* () {
          const store = yield* Store.CheckoutSessionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          yield* rolledBack(
            Effect.gen(function* () {
              const expectNext = (t: DateTime.Utc) =>
                Effect.map(store.nextExpiryAt, (next) => expect(isoOf(next)).toBe(DateTime.formatIso(t)))
              // Terminal sessions never expire again, however early their dates.
              const cancelled = yield* insertSession(tenant, { at: plus(Era, -20 * day) })
              yield* store.update({ ...cancelled, status: "CANCELLED", cancelledAt: plus(Era, -20 * day) })
              const completed = yield* activation(tenant, merchant.sandboxPayer, { at: plus(Era, -19 * day) })
              yield* storeActivation(completed)

              const soon = yield* insertSession(tenant, { at: plus(Era, -day + 250) })
              const later = yield* insertSession(tenantOf(merchant, "live"), { at: plus(Era, 2 * day + 7) })
              yield* expectNext(soon.expiresAt)
              yield* store.update({ ...soon, status: "CANCELLED", cancelledAt: Era })
              yield* expectNext(later.expiresAt)
              yield* store.update({ ...later, status: "EXPIRED", expiredAt: later.expiresAt })
              const next = yield* store.nextExpiryAt
              if (next !== undefined) expect(DateTime.greaterThan(next, later.expiresAt)).toBe(true)
            })
          )
        })
      )

      it.effect("a session locked by find forUpdate or lockById is paid once, however many race for it", () =>
        Effect.gen(function* () {
          const tx = yield* Store.Transactor
          const store = yield* Store.CheckoutSessionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const session = yield* insertSession(tenant, { mode: "PAYMENT" })
          // Read, wait (so the others run), write: without the lock, several would find it OPEN.
          const pay = (i: number) =>
            tx.withTransaction(
              Effect.gen(function* () {
                const found =
                  i % 2 === 0
                    ? yield* store.lockById(session.id)
                    : yield* store.find(tenant, Ids.lookup(session.id), { forUpdate: true })
                yield* Effect.sleep("2 millis")
                const paid = CheckoutSession.complete(found!, plus(T0, minute), {
                  customerId: merchant.sandboxPayer,
                  paymentId: `payment-${i}`
                })
                if (Either.isLeft(paid)) return undefined
                yield* store.update(paid.right)
                return paid.right.paymentId
              })
            )
          const winners = (yield* Effect.all(
            Array.from({ length: 10 }, (_, i) => pay(i)),
            { concurrency: "unbounded" }
          )).filter((p) => p !== undefined)
          expect(winners).toHaveLength(1)
          expect((yield* store.find(tenant, Ids.lookup(session.id)))?.paymentId).toBe(winners[0])
        })
      )
    })

    describe("subscriptions", () => {
      it.effect("insert, then find by id and by reference (also locked, and by lockById)", () =>
        Effect.gen(function* () {
          const store = yield* Store.SubscriptionsStore
          const tx = yield* Store.Transactor
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const monthly = yield* subscribe(tenant, merchant.sandboxPayer)
          const weekly = yield* subscribe(tenant, merchant.sandboxPayer, {
            at: plus(T0, 3 * day + 789),
            request: {
              reference: `SUB 7/2026 ${yield* uuid}`,
              priceData: { name: "Weekly box", amount: 500_000, interval: "WEEK", intervalCount: 52 }
            }
          })
          for (const { subscription: sub } of [monthly, weekly]) {
            expect(plain(yield* store.find(tenant, Ids.lookup(sub.id)))).toEqual(plain(sub))
            expect(plain(yield* store.find(tenant, Ids.lookup(sub.id.toUpperCase())))).toEqual(plain(sub))
            expect(plain(yield* store.find(tenant, Ids.lookup(sub.reference)))).toEqual(plain(sub))
            const locked = yield* tx.withTransaction(
              store.find(tenant, Ids.lookup(sub.reference), { forUpdate: true })
            )
            expect(plain(locked)).toEqual(plain(sub))
            expect(plain(yield* tx.withTransaction(store.lockById(sub.id)))).toEqual(plain(sub))
            expect(plain(yield* store.lockById(sub.id.toUpperCase()))).toEqual(plain(sub))
          }
          expect(weekly.subscription).toMatchObject({ interval: "WEEK", intervalCount: 52, amount: 500_000 })
          expect(yield* store.find(tenant, Ids.lookup(yield* uuid))).toBeUndefined()
          expect(yield* store.find(tenant, Ids.lookup("no-such-reference"))).toBeUndefined()
          expect(yield* store.find(tenant, { _tag: "ById", id: "not-a-uuid" })).toBeUndefined()
          // Text no database row can hold finds nothing, rather than failing.
          expect(yield* store.find(tenant, Ids.lookup("SUB\u00007"))).toBeUndefined()
          expect(yield* store.lockById(yield* uuid)).toBeUndefined()
          expect(yield* store.lockById("not-a-uuid")).toBeUndefined()
        })
      )

      it.effect("another merchant's or environment's subscription is not found; lockById finds any", () =>
        Effect.gen(function* () {
          const store = yield* Store.SubscriptionsStore
          const owner = yield* freshMerchant()
          const other = yield* freshMerchant()
          const { subscription: sub } = yield* subscribe(tenantOf(owner), owner.sandboxPayer)
          for (const tenant of [tenantOf(other), tenantOf(owner, "live"), tenantOf(other, "live")]) {
            expect(yield* store.find(tenant, Ids.lookup(sub.id))).toBeUndefined()
            expect(yield* store.find(tenant, Ids.lookup(sub.reference))).toBeUndefined()
            expect(yield* store.list(tenant, { limit: 100, offset: 0 })).toEqual([])
          }
          expect(ids(yield* store.list(tenantOf(owner), { limit: 100, offset: 0 }))).toEqual([sub.id])
          // The engine and the customer's side have no tenant: they find any subscription by id.
          expect((yield* store.lockById(sub.id))?.id).toBe(sub.id)
        })
      )

      it.effect("the schema refuses, as a defect, a second subscription of one session, or of none", () =>
        Effect.gen(function* () {
          const store = yield* Store.SubscriptionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const a = yield* subscribe(tenant, merchant.sandboxPayer)
          // The same session settled twice: a second activation of its open form.
          const twice = Either.getOrThrow(
            Subscription.activate(a.opened, merchant.sandboxPayer, plus(T0, 2 * minute), {
              subscriptionId: (yield* uuid) as Subscription.SubscriptionId,
              invoiceId: (yield* uuid) as Invoice.InvoiceId,
              paymentId: yield* uuid
            })
          )
          const orphan = yield* activation(tenant, merchant.sandboxPayer)
          const fresh = yield* activation(tenant, merchant.sandboxPayer, { at: plus(T0, hour) })
          yield* (yield* Store.CheckoutSessionsStore).insert(fresh.opened)
          const refusals: ReadonlyArray<readonly [string, Subscription.Subscription]> = [
            ["a second subscription of one session", twice.subscription],
            [
              "the same, under another reference",
              { ...twice.subscription, reference: `other-${yield* uuid}` }
            ],
            ["a subscription whose session was never stored", orphan.subscription],
            ["an id already taken", { ...fresh.subscription, id: a.subscription.id }]
          ]
          for (const [what, sub] of refusals) {
            expect(isDefect(yield* Effect.exit(store.insert(sub, plus(T0, day)))), what).toBe(true)
          }
          for (const id of [twice.subscription.id, orphan.subscription.id])
            expect(yield* store.lockById(id)).toBeUndefined()
          // The session left free takes its subscription.
          yield* store.insert(fresh.subscription, null)
          expect(plain(yield* store.lockById(fresh.subscription.id))).toEqual(plain(fresh.subscription))
          expect(plain(yield* store.find(tenant, Ids.lookup(a.subscription.reference)))).toEqual(
            plain(a.subscription)
          )
          expect(ids(yield* store.list(tenant, { limit: 100, offset: 0 }))).toEqual([
            fresh.subscription.id,
            a.subscription.id
          ])
        })
      )

      it.effect("list is newest first, filters by status and reference, pages by limit and offset", () =>
        Effect.gen(function* () {
          const store = yield* Store.SubscriptionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const payer = merchant.sandboxPayer
          const made = yield* Effect.forEach([1, 2, 3, 4, 5], (i) =>
            activation(tenant, payer, { at: plus(T0, i * minute) })
          )
          const withStatus = (a: Activated, status: Subscription.Status): Activated => {
            const at = plus(a.subscription.createdAt, hour)
            const subscription =
              status === "ACTIVE"
                ? a.subscription
                : status === "PAST_DUE"
                  ? { ...a.subscription, status, pastDueSince: at }
                  : Either.getOrThrow(Subscription.cancelNow(a.subscription, "MERCHANT", at)).subscription
            return { ...a, subscription }
          }
          const statuses: ReadonlyArray<Subscription.Status> = [
            "ACTIVE",
            "PAST_DUE",
            "ACTIVE",
            "CANCELLED",
            "ACTIVE"
          ]
          const stored = made.map((a, i) => withStatus(a, statuses[i]!))
          // Inserted out of order: the order of a list comes from `createdAt`, not from insertion.
          for (const i of [2, 0, 4, 1, 3]) yield* storeActivation(stored[i]!)
          // Two created in the same instant: the one inserted later is newer.
          const tieFirst = yield* subscribe(tenant, payer, { at: plus(T0, 10 * minute) })
          const tieSecond = yield* subscribe(tenant, payer, { at: plus(T0, 10 * minute) })
          yield* subscribe(tenantOf(yield* freshMerchant()), payer, { at: plus(T0, 3 * minute) })
          yield* subscribe(tenantOf(merchant, "live"), payer, { at: plus(T0, 3 * minute) })

          const newest = [tieSecond, tieFirst, ...[...stored].reverse()].map((a) => a.subscription)
          const list = (filter: Partial<Store.SubscriptionFilter>) =>
            Effect.map(store.list(tenant, { limit: 25, offset: 0, ...filter }), ids)
          expect(yield* list({})).toEqual(ids(newest))
          expect(plain(yield* store.list(tenant, { limit: 25, offset: 0 }))).toEqual(plain(newest))
          expect(yield* list({ status: "ACTIVE" })).toEqual(ids(newest.filter((s) => s.status === "ACTIVE")))
          expect(yield* list({ status: "PAST_DUE" })).toEqual([stored[1]!.subscription.id])
          expect(yield* list({ status: "CANCELLED" })).toEqual([stored[3]!.subscription.id])
          expect(yield* list({ reference: stored[3]!.subscription.reference })).toEqual([
            stored[3]!.subscription.id
          ])
          expect(yield* list({ reference: stored[3]!.subscription.reference, status: "ACTIVE" })).toEqual([])
          expect(yield* list({ reference: "no-such-reference" })).toEqual([])
          expect(yield* list({ limit: 2, offset: 1 })).toEqual(ids(newest.slice(1, 3)))
          expect(yield* list({ limit: 1, offset: 6 })).toEqual([newest[6]!.id])
          expect(yield* list({ offset: 7 })).toEqual([])
          expect(yield* list({ status: "ACTIVE", limit: 2, offset: 2 })).toEqual([
            stored[4]!.subscription.id,
            stored[2]!.subscription.id
          ])
        })
      )

      it.effect("update changes what the subscription's life changes, and nothing frozen at consent", () =>
        Effect.gen(function* () {
          const store = yield* Store.SubscriptionsStore
          const seed = yield* Seed
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const { subscription: sub } = yield* subscribe(tenant, merchant.sandboxPayer)
          const bystander = (yield* subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, hour) }))
            .subscription
          const find = Effect.map(store.find(tenant, Ids.lookup(sub.id)), plain)

          const p1 = Calendar.period(sub.billingCycleAnchor, sub.interval, sub.intervalCount, 1)
          const filled: Subscription.Subscription = {
            ...sub,
            status: "PAST_DUE",
            currentPeriodIndex: 1,
            currentPeriodStart: p1.start,
            currentPeriodEnd: p1.end,
            nextBillingAt: plus(p1.end, 1),
            cancelAtPeriodEnd: true,
            cancelledAt: plus(p1.start, 2 * hour + 2),
            cancellationInitiator: "OPS",
            pastDueSince: plus(p1.start, 7),
            balanceWarnedFor: 2,
            metadata: { order: "ބައްޕަ 7", "with space": 'a "quoted" value' }
          }
          yield* store.update(filled, plus(p1.start, 12 * hour))
          expect(yield* find).toEqual(plain(filled))

          yield* store.update({ ...filled, metadata: {} }, null)
          expect(yield* find).toEqual(plain({ ...filled, metadata: {} }))

          const emptied: Subscription.Subscription = {
            ...filled,
            status: "CANCELLED",
            nextBillingAt: null,
            cancelAtPeriodEnd: false,
            cancelledAt: null,
            cancellationInitiator: null,
            pastDueSince: null,
            balanceWarnedFor: null,
            metadata: null
          }
          yield* store.update(emptied, null)
          expect(yield* find).toEqual(plain(emptied))

          // The plan, the payer, the anchor and the origin are frozen at consent.
          const otherPayer = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
          const otherSession = yield* insertSession(tenant)
          yield* store.update(
            {
              ...emptied,
              reference: "another-reference",
              planName: "Another plan",
              amount: 99_999,
              interval: "WEEK",
              intervalCount: 3,
              checkoutSessionId: otherSession.id,
              customerId: otherPayer.id,
              billingCycleAnchor: plus(T0, day),
              createdAt: plus(T0, day)
            },
            null
          )
          expect(yield* find).toEqual(plain(emptied))

          // An update names its tenant: it cannot reach another merchant's or environment's subscription.
          for (const other of [tenantOf(yield* freshMerchant()), tenantOf(merchant, "live")]) {
            yield* store.update({ ...emptied, ...other, status: "ACTIVE", balanceWarnedFor: 9 }, null)
            expect(yield* find).toEqual(plain(emptied))
          }
          // An update of a subscription never inserted writes nothing.
          const ghost = (yield* activation(tenant, merchant.sandboxPayer)).subscription
          yield* store.update(ghost, plus(T0, day))
          expect(yield* store.lockById(ghost.id)).toBeUndefined()
          expect(plain(yield* store.find(tenant, Ids.lookup(bystander.id)))).toEqual(plain(bystander))
        })
      )

      it.effect("listByCustomer lists the subscriptions a wallet pays, of any merchant, newest first", () =>
        Effect.gen(function* () {
          const store = yield* Store.SubscriptionsStore
          const seed = yield* Seed
          const merchant = yield* freshMerchant()
          const customer = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
          const older = yield* subscribe(tenantOf(merchant), customer.id)
          const cancelled = yield* activation(tenantOf(yield* freshMerchant()), customer.id, {
            at: plus(T0, hour)
          })
          const ended = Either.getOrThrow(
            Subscription.cancelNow(cancelled.subscription, "PAYER", plus(T0, day))
          )
          yield* storeActivation({ ...cancelled, subscription: ended.subscription }, null)
          yield* subscribe(tenantOf(merchant), merchant.sandboxPayer, { at: plus(T0, minute) })
          expect(plain(yield* store.listByCustomer(customer.id))).toEqual(
            plain([ended.subscription, older.subscription])
          )
          expect(yield* store.listByCustomer((yield* uuid) as Ids.CustomerId)).toEqual([])
        })
      )

      it.effect(
        "lockMany returns the subscriptions named, of any tenant, in id order, and skips the rest",
        () =>
          Effect.gen(function* () {
            const store = yield* Store.SubscriptionsStore
            const merchant = yield* freshMerchant()
            const other = yield* freshMerchant()
            const tenants = [tenantOf(merchant), tenantOf(merchant, "live"), tenantOf(other)]
            const subs = yield* Effect.forEach(tenants, (tenant, i) =>
              Effect.map(
                subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, i * minute) }),
                (a) => a.subscription
              )
            )
            const sorted = [...subs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
            const named = [
              subs[2]!.id.toUpperCase(),
              yield* uuid,
              subs[0]!.id,
              "not-a-uuid",
              subs[1]!.id,
              subs[0]!.id
            ]
            expect(plain(yield* store.lockMany(named))).toEqual(plain(sorted))
            expect(ids(yield* store.lockMany([subs[1]!.id]))).toEqual([subs[1]!.id])
            expect(yield* store.lockMany([])).toEqual([])
            expect(yield* store.lockMany(["", yield* uuid])).toEqual([])
          })
      )

      it.effect("claimDue claims exactly the subscriptions due at now, in dueAt order, up to the limit", () =>
        Effect.gen(function* () {
          const store = yield* Store.SubscriptionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const now = Era
          const dueAt = (dueAt: DateTime.Utc | null, t: Ids.Tenant = tenant) =>
            Effect.map(subscribe(t, merchant.sandboxPayer, { dueAt }), (a) => a.subscription)
          yield* rolledBack(
            Effect.gen(function* () {
              // Inserted out of order: claims come in `dueAt` order.
              const atNow = yield* dueAt(now)
              const dayAgo = yield* dueAt(plus(now, -day))
              const justBefore = yield* dueAt(plus(now, -1), tenantOf(yield* freshMerchant(), "live"))
              const hourAgo = yield* dueAt(plus(now, -hour))
              const justAfter = yield* dueAt(plus(now, 1))
              const never = yield* dueAt(null)
              const due = [dayAgo, hourAgo, justBefore, atNow]

              expect(plain(yield* store.claimDue(now, 100))).toEqual(plain(due))
              expect(ids(yield* store.claimDue(now, 2))).toEqual(ids(due.slice(0, 2)))
              expect(ids(yield* store.claimDue(now, 1))).toEqual([dayAgo.id])
              expect(yield* store.claimDue(plus(now, -2 * day), 100)).toEqual([])
              expect(ids(yield* store.claimDue(plus(now, 1), 100))).toEqual(ids([...due, justAfter]))

              // `dueAt` moves with each update: done for now, due later, due earlier, never again.
              yield* store.update(dayAgo, plus(now, day))
              yield* store.update({ ...never, balanceWarnedFor: 1 }, plus(now, -2 * hour))
              yield* store.update(hourAgo, null)
              expect(ids(yield* store.claimDue(now, 100))).toEqual([never.id, justBefore.id, atNow.id])
              expect((yield* store.claimDue(now, 1))[0]?.balanceWarnedFor).toBe(1)
            })
          )
        })
      )

      it.effect("nextDueAt is the earliest dueAt of any subscription", () =>
        Effect.gen(function* () {
          const store = yield* Store.SubscriptionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          yield* rolledBack(
            Effect.gen(function* () {
              const expectNext = (t: DateTime.Utc) =>
                Effect.map(store.nextDueAt, (next) => expect(isoOf(next)).toBe(DateTime.formatIso(t)))
              yield* subscribe(tenant, merchant.sandboxPayer, { dueAt: null })
              const soon = yield* subscribe(tenant, merchant.sandboxPayer, { dueAt: plus(Era, 250) })
              const later = yield* subscribe(tenantOf(merchant, "live"), merchant.sandboxPayer, {
                dueAt: plus(Era, 3 * day + 7)
              })
              yield* expectNext(plus(Era, 250))
              yield* store.update(soon.subscription, null)
              yield* expectNext(plus(Era, 3 * day + 7))
              yield* store.update(soon.subscription, plus(Era, -5 * day))
              yield* expectNext(plus(Era, -5 * day))
              yield* store.update(soon.subscription, null)
              yield* store.update(later.subscription, null)
              const next = yield* store.nextDueAt
              if (next !== undefined) expect(DateTime.greaterThan(next, plus(Era, 3 * day + 7))).toBe(true)
            })
          )
        })
      )

      it.effect("a subscription found forUpdate or by lockById stays locked: no update is lost", () =>
        Effect.gen(function* () {
          const tx = yield* Store.Transactor
          const store = yield* Store.SubscriptionsStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const { subscription: sub } = yield* subscribe(tenant, merchant.sandboxPayer)
          // Read, wait (so the others run), write: without the lock, increments overwrite each other.
          const increment = (byLock: boolean) =>
            tx.withTransaction(
              Effect.gen(function* () {
                const found = byLock
                  ? yield* store.lockById(sub.id)
                  : yield* store.find(tenant, Ids.lookup(sub.reference), { forUpdate: true })
                yield* Effect.sleep("2 millis")
                yield* store.update({ ...found!, balanceWarnedFor: (found!.balanceWarnedFor ?? 0) + 1 }, null)
              })
            )
          yield* Effect.all(
            Array.from({ length: 10 }, (_, i) => increment(i % 2 === 0)),
            { concurrency: "unbounded" }
          )
          expect((yield* store.find(tenant, Ids.lookup(sub.id)))?.balanceWarnedFor).toBe(10)
        })
      )
    })

    describe("invoices", () => {
      it.effect("latestOf is latest for each subscription named, and nothing for one without invoices", () =>
        Effect.gen(function* () {
          const store = yield* Store.InvoicesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const a = yield* subscribe(tenant, merchant.sandboxPayer)
          const b = yield* subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, hour) })
          const second = yield* cycleInvoice(a.subscription, 1)
          yield* store.insert(second)
          const byId = (list: ReadonlyArray<Invoice.Invoice>) =>
            plain([...list].sort((x, y) => (x.id < y.id ? -1 : 1)))
          expect(byId(yield* store.latestOf([a.subscription.id, b.subscription.id]))).toEqual(
            byId([second, b.invoice])
          )
          expect(plain(yield* store.latestOf([b.subscription.id.toUpperCase(), yield* uuid, "x"]))).toEqual(
            plain([b.invoice])
          )
          expect(yield* store.latestOf([])).toEqual([])
          expect(yield* store.latestOf([yield* uuid])).toEqual([])
        })
      )

      it.effect(
        "listBySubscriptions gives each subscription's newest cycles, at most n each, in one go",
        () =>
          Effect.gen(function* () {
            const store = yield* Store.InvoicesStore
            const merchant = yield* freshMerchant()
            const tenant = tenantOf(merchant)
            const a = yield* subscribe(tenant, merchant.sandboxPayer)
            const b = yield* subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, hour) })
            const a1 = yield* cycleInvoice(a.subscription, 1)
            const a2 = paidAt(a1, plus(a1.createdAt, 5), yield* uuid)
            const a3 = yield* cycleInvoice(a.subscription, 2)
            yield* store.insert(a2)
            yield* store.insert(a3)
            const got = yield* store.listBySubscriptions(
              [a.subscription.id, b.subscription.id.toUpperCase(), yield* uuid],
              2
            )
            expect(plain(got.filter((i) => i.subscriptionId === a.subscription.id))).toEqual(plain([a3, a2]))
            expect(plain(got.filter((i) => i.subscriptionId === b.subscription.id))).toEqual(
              plain([b.invoice])
            )
            expect(got).toHaveLength(3)
            expect(yield* store.listBySubscriptions([], 2)).toEqual([])
          })
      )

      it.effect("latest is the highest period; list is newest cycle first, paged by limit and offset", () =>
        Effect.gen(function* () {
          const store = yield* Store.InvoicesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const { subscription: sub, invoice: first } = yield* subscribe(tenant, merchant.sandboxPayer)
          const other = yield* subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, hour) })
          expect(plain(yield* store.latest(sub.id))).toEqual(plain(first))
          expect(plain(yield* store.list(sub.id, { limit: 25, offset: 0 }))).toEqual(plain([first]))

          const paid = yield* Effect.forEach([1, 2], (n) =>
            Effect.gen(function* () {
              const inv = yield* cycleInvoice(sub, n)
              return paidAt(inv, plus(inv.createdAt, 5), yield* uuid)
            })
          )
          const open = yield* cycleInvoice(sub, 3)
          // Inserted out of order: the order comes from the period, not from insertion.
          for (const inv of [paid[1]!, open, paid[0]!]) yield* store.insert(inv)
          yield* store.insert(yield* cycleInvoice(other.subscription, 1))

          const newest = [open, paid[1]!, paid[0]!, first]
          expect(newest.map((i) => i.periodIndex)).toEqual([3, 2, 1, 0])
          expect(new Set(newest.map((i) => i.periodKey)).size).toBe(4)
          expect(plain(yield* store.latest(sub.id))).toEqual(plain(open))
          expect(plain(yield* store.latest(sub.id.toUpperCase()))).toEqual(plain(open))
          expect(plain(yield* store.list(sub.id, { limit: 25, offset: 0 }))).toEqual(plain(newest))
          expect(ids(yield* store.list(sub.id.toUpperCase(), { limit: 25, offset: 0 }))).toEqual(ids(newest))
          expect(ids(yield* store.list(sub.id, { limit: 2, offset: 1 }))).toEqual(ids(newest.slice(1, 3)))
          expect(ids(yield* store.list(sub.id, { limit: 1, offset: 3 }))).toEqual([first.id])
          expect(yield* store.list(sub.id, { limit: 25, offset: 4 })).toEqual([])
          expect((yield* store.latest(other.subscription.id))?.periodIndex).toBe(1)
          expect(ids(yield* store.list(other.subscription.id, { limit: 25, offset: 1 }))).toEqual([
            other.invoice.id
          ])
          for (const id of [yield* uuid, "not-a-uuid", ""]) {
            expect(yield* store.latest(id)).toBeUndefined()
            expect(yield* store.list(id, { limit: 25, offset: 0 })).toEqual([])
          }
        })
      )

      it.effect("update changes what attempts change, and nothing the cycle fixes", () =>
        Effect.gen(function* () {
          const store = yield* Store.InvoicesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const { subscription: sub, invoice: first } = yield* subscribe(tenant, merchant.sandboxPayer)
          const opened = yield* cycleInvoice(sub, 1)
          yield* store.insert(opened)
          const latest = Effect.map(store.latest(sub.id), plain)
          expect(yield* latest).toEqual(plain(opened))

          // Through the attempts: a miss, its retry, a success.
          const charging = Either.getOrThrow(Invoice.startAttempt(opened, plus(opened.createdAt, 3)))
          yield* store.update(charging)
          expect(yield* latest).toEqual(plain(charging))
          const missed = Either.getOrThrow(Invoice.fail(charging, "wallet-limit", plus(opened.createdAt, 9)))
          expect(missed).toMatchObject({ status: "PENDING", failureReason: "blocked-by-rules" })
          yield* store.update(missed)
          expect(yield* latest).toEqual(plain(missed))
          const retried = paidAt(missed, missed.nextRetryAt!, yield* uuid)
          yield* store.update(retried)
          expect(yield* latest).toEqual(plain(retried))

          const filled: Invoice.Invoice = {
            ...retried,
            status: "VOID",
            attemptCount: 4,
            nextRetryAt: plus(T0, 40 * day + 1),
            failureReason: "executor-error",
            voidedAt: plus(T0, 41 * day + 2)
          }
          yield* store.update(filled)
          expect(yield* latest).toEqual(plain(filled))
          const emptied: Invoice.Invoice = {
            ...filled,
            status: "PENDING",
            attemptCount: 0,
            nextRetryAt: null,
            failureReason: null,
            paymentIntentId: null,
            paidAt: null,
            lastAttemptAt: null,
            voidedAt: null
          }
          yield* store.update(emptied)
          expect(yield* latest).toEqual(plain(emptied))
          expect(plain(emptied)).toEqual(plain(opened))

          // The cycle, its subscription and its amount are fixed when it opens.
          const other = yield* subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, hour) })
          yield* store.update({
            ...emptied,
            subscriptionId: other.subscription.id,
            merchantId: (yield* freshMerchant()).id,
            environment: "live",
            subscriptionReference: "another-reference",
            periodIndex: 7,
            periodKey: "2027-01-01",
            periodStart: plus(T0, 300 * day),
            periodEnd: plus(T0, 330 * day),
            amount: 99_999,
            createdAt: plus(T0, day),
            status: "FAILED",
            attemptCount: 4
          })
          expect(yield* latest).toEqual(plain({ ...emptied, status: "FAILED", attemptCount: 4 }))
          expect(ids(yield* store.list(other.subscription.id, { limit: 25, offset: 0 }))).toEqual([
            other.invoice.id
          ])
          // An update of an invoice never inserted writes nothing.
          const ghost = yield* cycleInvoice(sub, 2)
          yield* store.update(ghost)
          expect(ids(yield* store.list(sub.id, { limit: 25, offset: 0 }))).toEqual([opened.id, first.id])
          expect(plain(yield* store.list(sub.id, { limit: 1, offset: 1 }))).toEqual(plain([first]))
        })
      )

      it.effect(
        "the schema refuses, as a defect, a second invoice for one period, or for no subscription",
        () =>
          Effect.gen(function* () {
            const store = yield* Store.InvoicesStore
            const merchant = yield* freshMerchant()
            const tenant = tenantOf(merchant)
            const a = yield* subscribe(tenant, merchant.sandboxPayer)
            const sub = a.subscription
            const second = yield* cycleInvoice(sub, 1)
            yield* store.insert(second)
            const orphan = yield* activation(tenant, merchant.sandboxPayer)
            const refusals: ReadonlyArray<readonly [string, Invoice.Invoice]> = [
              ["a second invoice for the period paid at consent", yield* cycleInvoice(sub, 0)],
              ["a second invoice for an open period", yield* cycleInvoice(sub, 1)],
              ["the same, already paid", paidAt(yield* cycleInvoice(sub, 1), plus(second.createdAt, 1), "p")],
              ["an invoice whose subscription was never stored", orphan.invoice],
              ["an id already taken", { ...(yield* cycleInvoice(sub, 2)), id: second.id }]
            ]
            for (const [what, inv] of refusals)
              expect(isDefect(yield* Effect.exit(store.insert(inv))), what).toBe(true)
            expect(plain(yield* store.list(sub.id, { limit: 25, offset: 0 }))).toEqual(
              plain([second, a.invoice])
            )
            expect(yield* store.list(orphan.subscription.id, { limit: 25, offset: 0 })).toEqual([])

            // The same period of another subscription is another cycle.
            const twin = yield* subscribe(tenant, merchant.sandboxPayer, { at: sub.billingCycleAnchor })
            const twinCycle = yield* cycleInvoice(twin.subscription, 1)
            expect(twinCycle.periodKey).toBe(second.periodKey)
            yield* store.insert(twinCycle)
            expect(plain(yield* store.latest(twin.subscription.id))).toEqual(plain(twinCycle))
          })
      )

      it.effect("a rolled-back transaction keeps no session, subscription or invoice", () =>
        Effect.gen(function* () {
          const tx = yield* Store.Transactor
          const sessions = yield* Store.CheckoutSessionsStore
          const subscriptions = yield* Store.SubscriptionsStore
          const invoices = yield* Store.InvoicesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const a = yield* activation(tenant, merchant.sandboxPayer, { at: plus(Era, -day) })
          const outcome = yield* tx
            .withTransaction(
              Effect.gen(function* () {
                yield* storeActivation(a, plus(Era, -day))
                expect((yield* subscriptions.lockById(a.subscription.id))?.id).toBe(a.subscription.id)
                return yield* new Rollback()
              })
            )
            .pipe(Effect.either)
          expect(Either.isLeft(outcome)).toBe(true)
          expect(yield* sessions.lockById(a.session.id)).toBeUndefined()
          expect(yield* subscriptions.lockById(a.subscription.id)).toBeUndefined()
          expect(yield* subscriptions.find(tenant, Ids.lookup(a.subscription.reference))).toBeUndefined()
          expect(yield* subscriptions.list(tenant, { limit: 25, offset: 0 })).toEqual([])
          expect(yield* subscriptions.listByCustomer(merchant.sandboxPayer)).toEqual([])
          expect(yield* invoices.latest(a.subscription.id)).toBeUndefined()
          expect(ids(yield* subscriptions.claimDue(Era, 100))).not.toContain(a.subscription.id)
          // The reference, the session and the period are free again.
          yield* storeActivation(a, null)
          expect(plain(yield* subscriptions.find(tenant, Ids.lookup(a.subscription.reference)))).toEqual(
            plain(a.subscription)
          )
          expect(plain(yield* invoices.latest(a.subscription.id))).toEqual(plain(a.invoice))
          expect(plain(yield* sessions.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(a.session))
        })
      )
    })

    describe("the QrCodes service on this store", () => {
      const Now = Date.parse("2026-03-15T10:00:00Z")
      const iso = (millis: number) => new Date(millis).toISOString()
      /** The service reads `DateTime.now`: each test runs on a manual clock of its own, set by the test. */
      const onManualClock = <A, E, R>(test: (clock: Work.ManualClock) => Effect.Effect<A, E, R>) => {
        const clock = Work.makeManualClock(Now)
        return Effect.withClock(test(clock), clock.clock)
      }

      const payer = (balance: number, environment: Ids.Environment = "test") =>
        Effect.flatMap(freshPhone, (phone) =>
          Effect.flatMap(Seed, (seed) => seed.customer({ environment, phone, balance }))
        )

      /** Everything a refused payment must leave alone. */
      const moneyOf = (merchant: Store.Merchant, customerId: Ids.CustomerId) =>
        Effect.gen(function* () {
          const seed = yield* Seed
          return {
            payer: (yield* (yield* Wallet.Wallet).payer(customerId))?.balance,
            merchant: yield* seed.merchantBalance(merchant.id, "test"),
            fee: yield* seed.feeBalance("test"),
            total: yield* seed.ledgerTotal
          }
        })

      const qrEvents = (merchant: Store.Merchant) =>
        Effect.map(
          Effect.flatMap(Seed, (seed) => seed.events),
          (events) =>
            events.filter(
              (e) => e.merchantId === merchant.id && e.envelope.type === "qr_code.payment.succeeded"
            )
        )

      const pay = (customerId: Ids.CustomerId, payload: string, amount: number | null = null) =>
        Effect.flatMap(QrCodes.QrCodes, (qr) => qr.pay({ environment: "test", customerId, payload, amount }))

      it.effect(
        "creates a static code: ACTIVE, titled after its outlet, its payload naming it, its image saved",
        () =>
          onManualClock(() =>
            Effect.gen(function* () {
              const qr = yield* QrCodes.QrCodes
              const { merchant, outlet, tenant } = yield* merchantWithOutlet({
                name: "Bappa Café",
                city: "Malé",
                mcc: "5812"
              })
              const code = yield* qr.create(tenant, qrRequest(outlet.id))
              expect(code).toMatchObject({
                merchantId: merchant.id,
                environment: "test",
                outletId: outlet.id,
                type: "STATIC",
                status: "ACTIVE",
                title: "Majeedhee Magu",
                description: null,
                amount: null,
                expiresAt: null,
                deactivatedAt: null,
                // Without a reference of the merchant's, the qrid is the reference.
                reference: code.qrid
              })
              expect(Ids.isUuid(code.id)).toBe(true)
              expect(QrScheme.isQrid(code.qrid)).toBe(true)
              expect(DateTime.formatIso(code.createdAt)).toBe(iso(Now))
              expect(Either.getOrThrow(QrScheme.parse(code.payload))).toEqual({
                type: "STATIC",
                qrid: code.qrid,
                amount: null,
                merchant: {
                  id: merchant.id,
                  name: "Bappa Cafe",
                  city: "Male",
                  mcc: "5812",
                  nameLocal: null,
                  cityLocal: null
                },
                outletId: outlet.id,
                outletLabel: "Majeedhee Magu"
              })
              const image = yield* qr.image(code.id)
              expect(image && Array.from(image)).toEqual(
                Array.from(MemoryQrImages.placeholderBytes(code.payload))
              )
              expect(plain(yield* qr.get(tenant, code.id))).toEqual(plain(code))
              expect(plain(yield* qr.get(tenant, code.qrid))).toEqual(plain(code))

              const named = yield* qr.create(
                tenant,
                qrRequest(outlet.id, { title: "Till 2", description: "By the door", reference: "till-2" })
              )
              expect(named).toMatchObject({
                title: "Till 2",
                description: "By the door",
                reference: "till-2"
              })
              expect(plain(yield* qr.get(tenant, "till-2"))).toEqual(plain(named))
              expect(ids(yield* qr.list(tenant, { limit: 25, offset: 0 }))).toEqual([named.id, code.id])
            })
          )
      )

      it.effect("creates a dynamic code expiring after expiresInMinutes (15 by default), with no image", () =>
        onManualClock(() =>
          Effect.gen(function* () {
            const qr = yield* QrCodes.QrCodes
            const { outlet, tenant } = yield* merchantWithOutlet()
            const five = yield* qr.create(
              tenant,
              qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550, expiresInMinutes: 5 })
            )
            expect(five).toMatchObject({ type: "DYNAMIC", status: "ACTIVE", amount: 12_550 })
            expect(DateTime.formatIso(five.expiresAt!)).toBe(iso(Now + 5 * minute))
            const parsed = Either.getOrThrow(QrScheme.parse(five.payload))
            expect(parsed).toMatchObject({ type: "DYNAMIC", amount: 12_550, qrid: five.qrid })
            const standard = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 100 }))
            expect(DateTime.formatIso(standard.expiresAt!)).toBe(iso(Now + 15 * minute))
            expect(yield* qr.image(five.id)).toBeUndefined()
            expect(yield* qr.image(standard.id)).toBeUndefined()
            expect(plain(yield* qr.get(tenant, five.id))).toEqual(plain(five))
          })
        )
      )

      it.effect(
        "refuses every rule of QrCode.validate with InvalidRequest naming the field, and keeps nothing",
        () =>
          onManualClock(() =>
            Effect.gen(function* () {
              const qr = yield* QrCodes.QrCodes
              const { outlet, tenant } = yield* merchantWithOutlet()
              const dyn = { type: "DYNAMIC", amount: 1_000 } as const
              const cases: ReadonlyArray<readonly [Partial<QrCode.Request>, string]> = [
                [{ title: "t".repeat(256) }, "title"],
                [{ description: "d".repeat(256) }, "description"],
                [{ reference: "r".repeat(256) }, "reference"],
                [{ reference: "   " }, "reference"],
                [{ reference: "" }, "reference"],
                [{ type: "DYNAMIC" }, "amount"],
                [{ ...dyn, amount: 99 }, "amount"],
                [{ ...dyn, amount: 150.5 }, "amount"],
                [{ ...dyn, amount: QrCode.MaxAmount + 1 }, "amount"],
                [{ ...dyn, expiresInMinutes: 0 }, "expiresInMinutes"],
                [{ ...dyn, expiresInMinutes: 16 }, "expiresInMinutes"],
                [{ ...dyn, expiresInMinutes: 2.5 }, "expiresInMinutes"],
                [{ amount: 1_000 }, "amount"],
                [{ expiresInMinutes: 5 }, "expiresInMinutes"]
              ]
              for (const [overrides, field] of cases) {
                const error = yield* Effect.flip(qr.create(tenant, qrRequest(outlet.id, overrides)))
                expect(error._tag, JSON.stringify(overrides)).toBe("InvalidRequest")
                if (error._tag !== "InvalidRequest") continue
                expect(
                  error.errors.map((e) => e.field),
                  JSON.stringify(overrides)
                ).toContain(field)
                expect(error.message).toBe(`${error.errors[0]!.field}: ${error.errors[0]!.message}`)
              }
              expect(yield* qr.list(tenant, { limit: 100, offset: 0 })).toEqual([])
              // The edges of every rule are allowed.
              for (const overrides of [
                { title: "t".repeat(255), description: "d".repeat(255), reference: "r".repeat(255) },
                { ...dyn, amount: 100, expiresInMinutes: 1 },
                { ...dyn, amount: QrCode.MaxAmount, expiresInMinutes: 15 }
              ] as const)
                yield* qr.create(tenant, qrRequest(outlet.id, overrides))
              expect(yield* qr.list(tenant, { limit: 100, offset: 0 })).toHaveLength(3)
            })
          )
      )

      it.effect("an outlet of another merchant, or none, is OutletNotFound", () =>
        onManualClock(() =>
          Effect.gen(function* () {
            const qr = yield* QrCodes.QrCodes
            const { tenant } = yield* merchantWithOutlet()
            const other = yield* merchantWithOutlet()
            for (const outletId of [other.outlet.id, 2 ** 31 - 1, 2 ** 31])
              expect(yield* Effect.flip(qr.create(tenant, qrRequest(outletId)))).toMatchObject({
                _tag: "OutletNotFound",
                message: "Outlet not found"
              })
            expect(yield* qr.list(tenant, { limit: 100, offset: 0 })).toEqual([])
          })
        )
      )

      it.effect(
        "a reference the merchant already used is QrReferenceTaken; another merchant may use it",
        () =>
          onManualClock(() =>
            Effect.gen(function* () {
              const qr = yield* QrCodes.QrCodes
              const { outlet, tenant } = yield* merchantWithOutlet()
              const other = yield* merchantWithOutlet()
              const first = yield* qr.create(tenant, qrRequest(outlet.id, { reference: "counter" }))
              const refused = yield* Effect.flip(
                qr.create(
                  tenant,
                  qrRequest(outlet.id, { reference: "counter", type: "DYNAMIC", amount: 500 })
                )
              )
              expect(refused).toMatchObject({ _tag: "QrReferenceTaken" })
              expect(ids(yield* qr.list(tenant, { limit: 100, offset: 0 }))).toEqual([first.id])
              const theirs = yield* qr.create(
                other.tenant,
                qrRequest(other.outlet.id, { reference: "counter" })
              )
              expect((yield* qr.get(other.tenant, "counter")).id).toBe(theirs.id)
            })
          )
      )

      it.effect(
        "deactivate: INACTIVE and kept; again is QrCodeAlreadyInactive; another merchant's is not found",
        () =>
          onManualClock((clock) =>
            Effect.gen(function* () {
              const qr = yield* QrCodes.QrCodes
              const { outlet, tenant } = yield* merchantWithOutlet()
              const other = yield* merchantWithOutlet()
              const code = yield* qr.create(tenant, qrRequest(outlet.id, { reference: "door" }))
              expect(yield* Effect.flip(qr.deactivate(other.tenant, code.id))).toMatchObject({
                _tag: "QrCodeNotFound",
                message: "QR code not found"
              })
              expect(
                yield* Effect.flip(qr.deactivate(tenantOf(other.merchant, "live"), "door"))
              ).toMatchObject({
                _tag: "QrCodeNotFound"
              })
              clock.set(Now + minute)
              const off = yield* qr.deactivate(tenant, "door")
              expect(off).toMatchObject({ id: code.id, type: "STATIC", status: "INACTIVE" })
              expect(DateTime.formatIso(off.deactivatedAt!)).toBe(iso(Now + minute))
              // Kept, and still served.
              expect(plain(yield* qr.get(tenant, code.id))).toEqual(plain(off))
              expect(ids(yield* qr.list(tenant, { limit: 100, offset: 0 }))).toEqual([code.id])
              expect(yield* qr.image(code.id)).toBeDefined()
              for (const idOrReference of [code.id, "door"])
                expect(yield* Effect.flip(qr.deactivate(tenant, idOrReference))).toMatchObject({
                  _tag: "QrCodeAlreadyInactive",
                  message: "QR code is already inactive"
                })
              expect(yield* Effect.flip(qr.deactivate(tenant, yield* uuid))).toMatchObject({
                _tag: "QrCodeNotFound"
              })
              expect(yield* Effect.flip(qr.get(other.tenant, code.id))).toMatchObject({
                _tag: "QrCodeNotFound"
              })
            })
          )
      )

      it.effect("concurrent deactivations of one code: exactly one wins, the others find it inactive", () =>
        onManualClock(() =>
          Effect.gen(function* () {
            const qr = yield* QrCodes.QrCodes
            const { outlet, tenant } = yield* merchantWithOutlet()
            const code = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 500 }))
            const outcomes = yield* Effect.all(
              Array.from({ length: 8 }, () => Effect.either(qr.deactivate(tenant, code.id))),
              { concurrency: "unbounded" }
            )
            expect(outcomes.filter(Either.isRight)).toHaveLength(1)
            for (const outcome of outcomes.filter(Either.isLeft))
              expect(outcome.left._tag).toBe("QrCodeAlreadyInactive")
            expect((yield* qr.get(tenant, code.id)).status).toBe("INACTIVE")
          })
        )
      )

      it.effect(
        "paying a dynamic code moves exactly its amount, records the qrid, emits the event, notifies",
        () =>
          onManualClock((clock) =>
            Effect.gen(function* () {
              const qr = yield* QrCodes.QrCodes
              const payments = yield* Store.QrPaymentsStore
              const notifications = yield* Notifications.Notifications
              const { merchant, outlet, tenant } = yield* merchantWithOutlet({ name: "Bappa Cafe" })
              const customer = yield* payer(50_000)
              const code = yield* qr.create(
                tenant,
                qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550, reference: "order-1" })
              )
              const before = yield* moneyOf(merchant, customer.id)
              clock.set(Now + 15 * minute - 1)
              const payment = yield* pay(customer.id, code.payload)
              expect(payment).toMatchObject({
                qrCodeId: code.id,
                qrid: code.qrid,
                merchantId: merchant.id,
                environment: "test",
                outletId: outlet.id,
                customerId: customer.id,
                amount: 12_550,
                fee: 126,
                netAmount: 12_424,
                amountRefunded: 0,
                reference: "order-1"
              })
              expect(DateTime.formatIso(payment.createdAt)).toBe(iso(Now + 15 * minute - 1))
              expect(yield* moneyOf(merchant, customer.id)).toEqual({
                payer: before.payer! - 12_550,
                merchant: before.merchant + 12_424,
                fee: before.fee + 126,
                total: 0
              })
              expect(plain(yield* payments.listByCode(code.id))).toEqual(plain([payment]))

              const [event, ...more] = yield* qrEvents(merchant)
              expect(more).toEqual([])
              expect(event!.environment).toBe("test")
              expect(event!.envelope).toMatchObject({ type: "qr_code.payment.succeeded", livemode: false })
              expect(event!.envelope.data.object).toMatchObject({
                id: payment.id,
                object: "qr_code_payment",
                qrid: code.qrid,
                qr_code_id: code.id,
                outlet_id: String(outlet.id),
                amount: 12_550,
                currency: "MVR",
                fee: 126,
                net_amount: 12_424,
                reference: "order-1"
              })

              const [notice] = yield* notifications.list(customer.id)
              expect(notice).toMatchObject({
                kind: "payment",
                environment: "test",
                data: { qr_code_id: code.id, qrid: code.qrid, payment_id: payment.id, amount: 12_550 }
              })
              expect(notice!.title).toContain("125.50")

              // Typing the exact amount is fine too.
              const exact = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 2_000 }))
              expect((yield* pay(customer.id, exact.payload, 2_000)).amount).toBe(2_000)
            })
          )
      )

      it.effect("a static code is paid what the customer types, from 100 laari", () =>
        onManualClock(() =>
          Effect.gen(function* () {
            const qr = yield* QrCodes.QrCodes
            const { merchant, outlet, tenant } = yield* merchantWithOutlet()
            const customer = yield* payer(5_000)
            const code = yield* qr.create(tenant, qrRequest(outlet.id))
            const before = yield* moneyOf(merchant, customer.id)
            expect(yield* pay(customer.id, code.payload, 100)).toMatchObject({
              amount: 100,
              fee: 1,
              netAmount: 99,
              amountRefunded: 0
            })
            expect(yield* pay(customer.id, code.payload, 1_000)).toMatchObject({ amount: 1_000, fee: 10 })
            expect(yield* moneyOf(merchant, customer.id)).toEqual({
              payer: before.payer! - 1_100,
              merchant: before.merchant + 1_089,
              fee: before.fee + 11,
              total: 0
            })
            expect((yield* (yield* Store.QrPaymentsStore).listByCode(code.id)).map((p) => p.amount)).toEqual([
              1_000, 100
            ])
          })
        )
      )

      it.effect("refuses an expired, inactive or wrongly typed payment, and moves nothing", () =>
        onManualClock((clock) =>
          Effect.gen(function* () {
            const qr = yield* QrCodes.QrCodes
            const payments = yield* Store.QrPaymentsStore
            const { merchant, outlet, tenant } = yield* merchantWithOutlet()
            const customer = yield* payer(100_000)
            const timed = yield* qr.create(
              tenant,
              qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550, expiresInMinutes: 5 })
            )
            const fixed = yield* qr.create(tenant, qrRequest(outlet.id))
            const retired = yield* qr.create(tenant, qrRequest(outlet.id))
            yield* qr.deactivate(tenant, retired.id)
            const before = yield* moneyOf(merchant, customer.id)

            const refusals: ReadonlyArray<readonly [string, number | null, QrCode.PaymentRefusal]> = [
              [timed.payload, 12_551, "amount-mismatch"],
              [timed.payload, 100, "amount-mismatch"],
              [fixed.payload, null, "amount-required"],
              [fixed.payload, 99, "amount-required"],
              [fixed.payload, 150.5, "amount-required"],
              [fixed.payload, 0, "amount-required"],
              [retired.payload, 1_000, "inactive"]
            ]
            const expectRefused = (payload: string, amount: number | null, reason: QrCode.PaymentRefusal) =>
              Effect.gen(function* () {
                const refused = yield* Effect.flip(pay(customer.id, payload, amount))
                expect(refused, `${reason} ${amount}`).toMatchObject({
                  _tag: "QrPaymentRefused",
                  reason,
                  message: QrCode.paymentMessages[reason]
                })
              })
            for (const [payload, amount, reason] of refusals) yield* expectRefused(payload, amount, reason)
            // It stops at expiresAt, exactly, whatever the customer types.
            clock.set(Now + 5 * minute)
            yield* expectRefused(timed.payload, null, "expired")
            yield* expectRefused(timed.payload, 12_550, "expired")

            expect(yield* moneyOf(merchant, customer.id)).toEqual(before)
            for (const code of [timed, fixed, retired])
              expect(yield* payments.listByCode(code.id)).toEqual([])
            expect(yield* qrEvents(merchant)).toEqual([])
            expect(yield* (yield* Notifications.Notifications).list(customer.id)).toEqual([])
          })
        )
      )

      it.effect(
        "a tampered payload is QrPayloadInvalid; a foreign, unknown or other-environment code QrCodeNotFound",
        () =>
          onManualClock(() =>
            Effect.gen(function* () {
              const qr = yield* QrCodes.QrCodes
              const { merchant, outlet, tenant } = yield* merchantWithOutlet()
              const customer = yield* payer(100_000)
              const code = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550 }))
              const before = yield* moneyOf(merchant, customer.id)
              const scheme = (qrid: string, amount: number) =>
                Either.getOrThrow(
                  QrScheme.build({
                    type: "DYNAMIC",
                    qrid,
                    merchant: {
                      id: merchant.id,
                      name: merchant.name,
                      city: merchant.city,
                      mcc: merchant.mcc
                    },
                    outletId: outlet.id,
                    outletLabel: outlet.name,
                    amount
                  })
                )
              // The builder and the service agree: the cases below differ from the real payload only as stated.
              expect(scheme(code.qrid, 12_550)).toBe(code.payload)

              const last = code.payload.at(-1)
              const badCrc = `${code.payload.slice(0, -1)}${last === "0" ? "1" : "0"}`
              const badAmount = code.payload.replace("5406125.50", "5406999.50")
              for (const payload of [badCrc, badAmount, "not a QR payload", ""]) {
                expect(badAmount).not.toBe(code.payload)
                const refused = yield* Effect.flip(pay(customer.id, payload))
                expect(refused._tag, payload).toBe("QrPayloadInvalid")
              }

              const foreign = Either.getOrThrow(
                Emv.encode([
                  { tag: "00", value: "01" },
                  { tag: "01", value: "12" },
                  {
                    tag: "26",
                    value: [
                      { tag: "00", value: "com.example.wallet" },
                      { tag: "01", value: "merchant-42" }
                    ]
                  },
                  { tag: "52", value: "5999" },
                  { tag: "53", value: "462" },
                  { tag: "54", value: "125.50" },
                  { tag: "58", value: "MV" },
                  { tag: "59", value: "OTHER SHOP" },
                  { tag: "60", value: "MALE" },
                  { tag: "62", value: [{ tag: "05", value: code.qrid }] }
                ])
              )
              expect(yield* Effect.flip(pay(customer.id, foreign))).toMatchObject({
                _tag: "QrCodeNotFound",
                message: "This QR code is not one of ours"
              })
              expect(yield* Effect.flip(pay(customer.id, scheme(yield* freshQrid, 12_550)))).toMatchObject({
                _tag: "QrCodeNotFound",
                message: "QR code not found"
              })
              const live = yield* payer(100_000, "live")
              expect(
                yield* Effect.flip(
                  qr.pay({ environment: "live", customerId: live.id, payload: code.payload, amount: null })
                )
              ).toMatchObject({ _tag: "QrCodeNotFound" })
              // Our scheme, this code's qrid, a valid CRC, but not the content that was issued.
              expect(yield* Effect.flip(pay(customer.id, scheme(code.qrid, 100)))).toMatchObject({
                _tag: "QrPaymentRefused",
                reason: "payload-mismatch"
              })

              expect(yield* moneyOf(merchant, customer.id)).toEqual(before)
              expect(yield* (yield* Store.QrPaymentsStore).listByCode(code.id)).toEqual([])
              expect(yield* qrEvents(merchant)).toEqual([])
            })
          )
      )

      it.effect("a wallet that cannot pay is QrPaymentDeclined, and nothing moves or is recorded", () =>
        onManualClock(() =>
          Effect.gen(function* () {
            const qr = yield* QrCodes.QrCodes
            const seed = yield* Seed
            const { merchant, outlet, tenant } = yield* merchantWithOutlet()
            const customer = yield* payer(12_549)
            const code = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550 }))
            const before = yield* moneyOf(merchant, customer.id)
            expect(yield* Effect.flip(pay(customer.id, code.payload))).toMatchObject({
              _tag: "QrPaymentDeclined",
              reason: "insufficient-balance",
              message: "Insufficient funds"
            })
            yield* seed.setPayer(customer.id, { balance: 20_000, limit: 10_000 })
            expect(yield* Effect.flip(pay(customer.id, code.payload))).toMatchObject({
              _tag: "QrPaymentDeclined",
              reason: "wallet-limit"
            })
            yield* seed.setPayer(customer.id, { balance: 12_549, limit: null })
            expect(yield* moneyOf(merchant, customer.id)).toEqual(before)
            expect(yield* (yield* Store.QrPaymentsStore).listByCode(code.id)).toEqual([])
            expect(yield* qrEvents(merchant)).toEqual([])
            expect(yield* (yield* Notifications.Notifications).list(customer.id)).toEqual([])
          })
        )
      )

      it.effect("a renderer that fails fails the create with ServiceUnavailable, and nothing is kept", () =>
        onManualClock(() =>
          Effect.gen(function* () {
            const store = yield* Store.QrCodesStore
            const { outlet, tenant } = yield* merchantWithOutlet()
            const withoutImages = QrCodes.QrCodes.Default.pipe(Layer.provide(MemoryQrImages.layerFailing))
            const create = (request: QrCode.Request) =>
              Effect.flatMap(QrCodes.QrCodes, (qr) => qr.create(tenant, request)).pipe(
                Effect.provide(withoutImages)
              )
            const refused = yield* Effect.flip(create(qrRequest(outlet.id, { reference: "sticker" })))
            expect(refused).toBeInstanceOf(Errors.ServiceUnavailable)
            expect(refused.message).toBe("The QR image could not be rendered")
            expect(yield* store.find(tenant, Ids.lookup("sticker"))).toBeUndefined()
            expect(yield* store.list(tenant, { limit: 100, offset: 0 })).toEqual([])
            // A dynamic code has no image, so it does not need the renderer.
            const timed = yield* create(qrRequest(outlet.id, { type: "DYNAMIC", amount: 500 }))
            expect(ids(yield* store.list(tenant, { limit: 100, offset: 0 }))).toEqual([timed.id])
            // The reference was never taken.
            const code = yield* (yield* QrCodes.QrCodes).create(
              tenant,
              qrRequest(outlet.id, { reference: "sticker" })
            )
            expect((yield* store.find(tenant, Ids.lookup("sticker")))?.id).toBe(code.id)
          })
        )
      )
    })

    describe("the Mandates service on this store", () => {
      /** The service reads `DateTime.now`: a manual clock pins it to a realistic moment. */
      const at = (iso: string) => Effect.withClock(Work.makeManualClock(Date.parse(iso)).clock)

      it.effect("40 concurrent charges on one mandate never exceed its period cap", () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const mandates = yield* Mandates.Mandates
          const charges = yield* Store.ChargesStore
          const merchant = yield* freshMerchant()
          const tenant = tenantOf(merchant)
          const periodCap = 100_000
          const m = yield* mandates.create(tenant, {
            reference: `concurrent-${yield* uuid}`,
            title: "Concurrent",
            description: null,
            perChargeCap: 5_000,
            periodCap,
            period: "MONTH",
            expiresAt: null,
            returnUrl: null
          })
          const feeBefore = yield* seed.feeBalance("test")
          const amounts = Array.from({ length: 40 }, (_, i) => 3_000 + (i % 5) * 100)
          const outcomes = yield* Effect.all(
            amounts.map((amount) => Effect.either(mandates.charge(tenant, m.id, { amount }))),
            { concurrency: "unbounded" }
          )
          const succeeded = outcomes.filter(Either.isRight).map((o) => o.right)
          const refused = outcomes.filter(Either.isLeft).map((o) => o.left)
          const sum = succeeded.reduce((s, c) => s + c.amount, 0)
          expect(sum).toBeLessThanOrEqual(periodCap)
          // Charges stop only when the next one would not fit.
          expect(sum).toBeGreaterThan(periodCap - Math.max(...amounts))
          for (const r of refused)
            expect(r).toMatchObject({ _tag: "ChargeRefused", code: "PERIOD_CAP_EXCEEDED" })
          // Serialized: in commit order, each success's running total is the previous one plus its amount.
          const byTotal = [...succeeded].sort((a, b) => a.periodCharged - b.periodCharged)
          for (const [i, c] of byTotal.entries())
            expect(c.periodCharged - (byTotal[i - 1]?.periodCharged ?? 0)).toBe(c.amount)

          const after = yield* mandates.get(tenant, m.id)
          expect(after.periodCharged).toBe(sum)
          expect(after.periodKey).toBe("2026-03")
          expect((yield* charges.listByMandate(m.id)).length).toBe(succeeded.length)
          const payer = yield* (yield* Wallet.Wallet).payer(merchant.sandboxPayer)
          expect(SandboxPayerBalance - payer!.balance).toBe(sum)
          const merchantGot = yield* seed.merchantBalance(merchant.id, "test")
          const feeGot = (yield* seed.feeBalance("test")) - feeBefore
          expect(merchantGot + feeGot).toBe(sum)
          expect(merchantGot).toBe(succeeded.reduce((s, c) => s + c.netAmount, 0))
          expect(yield* seed.ledgerTotal).toBe(0)

          const events = (yield* seed.events).filter((e) => e.merchantId === merchant.id)
          const count = (type: Events.Type) => events.filter((e) => e.envelope.type === type).length
          expect(count("mandate.charge.succeeded")).toBe(succeeded.length)
          expect(count("mandate.charge.failed")).toBe(refused.length)
        }).pipe(at("2026-03-15T10:00:00Z"))
      )

      it.effect(
        "approval through the service: a code to the customer, then an ACTIVE mandate bound to them",
        () =>
          Effect.gen(function* () {
            const seed = yield* Seed
            const mandates = yield* Mandates.Mandates
            const notifications = yield* Notifications.Notifications
            const merchant = yield* freshMerchant({ features: { mandatesLive: true } })
            const tenant = tenantOf(merchant, "live")
            const phone = yield* freshPhone
            const customer = yield* seed.customer({ environment: "live", phone, balance: 20_000 })
            const m = yield* mandates.create(tenant, {
              reference: `approval-${yield* uuid}`,
              title: "Approval",
              description: null,
              perChargeCap: 10_000,
              periodCap: null,
              period: null,
              expiresAt: null,
              returnUrl: null
            })
            expect(m.status).toBe("INITIATED")
            const challenge = yield* mandates.requestApproval(m.id, phone)
            const [notice] = yield* notifications.list(customer.id)
            expect(notice).toMatchObject({ kind: "one_time_code", data: { challenge_id: challenge.id } })
            const approved = yield* mandates.approve(m.id, challenge.id, String(notice!.data.code))
            expect(approved).toMatchObject({ status: "ACTIVE", customerId: customer.id })
            const charge = yield* mandates.charge(tenant, m.reference, { amount: 5_000 })
            expect(charge).toMatchObject({
              amount: 5_000,
              fee: 50,
              netAmount: 4_950,
              amountRefunded: 0,
              customerId: customer.id
            })
            expect((yield* (yield* Wallet.Wallet).payer(customer.id))?.balance).toBe(15_000)
            expect(yield* seed.merchantBalance(merchant.id, "live")).toBe(4_950)
            const types = (yield* seed.events)
              .filter((e) => e.merchantId === merchant.id)
              .map((e) => e.envelope.type)
            expect(types).toEqual(["mandate.activated", "mandate.charge.succeeded"])
          }).pipe(at("2026-03-15T10:00:00Z"))
      )
    })

    const helpers = { freshMerchant, tenantOf, subscribe, cycleInvoice, merchantWithOutlet, qrRequest }
    RefundContract.tests(it, helpers)
    PaymentReadContract.tests(it, helpers)
  })
}
