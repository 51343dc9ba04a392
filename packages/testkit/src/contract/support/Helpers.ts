/**
 * What the parts of the store contract share: fixed moments, fresh merchants, outlets and customers, complete
 * records to insert (mandates, QR codes and payments, checkout sessions, subscriptions and invoices), and
 * a transaction that is rolled back.
 */
import type { Vitest } from "@effect/vitest"
import {
  Calendar,
  CheckoutSession,
  Crypto,
  type DeliveriesStore,
  type Engine,
  Ids,
  Invoice,
  type Mandate,
  type NoticeOutbox,
  type QrCode,
  type QrImages,
  QrScheme,
  Store,
  Subscription
} from "@laari/core"
import { Cause, Data, DateTime, Effect, Either, Exit } from "effect"
import { type MerchantInput, Seed } from "../../Seed.js"

/** Every port of core: what a host brings. */
export type AllCorePorts =
  | Store.Ports
  | DeliveriesStore.DeliveriesStore
  | NoticeOutbox.NoticeOutbox
  | Crypto.Crypto

/** What the contract's tests run with: core's services over the adapter's ports, and seeding. */
export type Services = Engine.Services | AllCorePorts | QrImages.QrImages | Seed

/** The `it` of the suite's one layer, which every part registers its tests with. */
export type It = Vitest.MethodsNonLive<Services, true>

// -------------------------------------------------------------------------------------------------
// Helpers
// -------------------------------------------------------------------------------------------------

/** A base moment with milliseconds, so stores that drop them are caught. */
export const T0 = DateTime.unsafeMake("2026-03-31T10:00:00.123Z")
export const plus = (t: DateTime.Utc, millis: number): DateTime.Utc =>
  DateTime.unsafeMake(DateTime.toEpochMillis(t) + millis)
export const second = 1_000
export const minute = 60 * second
export const hour = 60 * minute
export const day = 24 * hour

/** Values with every `DateTime` as its ISO text: equal to the millisecond, and readable when not. */
export const plain = (value: unknown): unknown => {
  if (DateTime.isDateTime(value)) return DateTime.formatIso(value)
  if (Array.isArray(value)) return value.map(plain)
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]))
  return value
}

export const uuid = Effect.flatMap(Crypto.Crypto, (c) => c.uuid)

let merchantCount = 0
/** A fresh merchant, so no test sees another's data. */
export const freshMerchant = (input: Partial<MerchantInput> = {}) =>
  Effect.flatMap(Seed, (seed) => seed.merchant({ name: `Contract merchant ${++merchantCount}`, ...input }))

export const tenantOf = (merchant: Store.Merchant, environment: Ids.Environment = "test"): Ids.Tenant => ({
  merchantId: merchant.id,
  environment
})

/** A fresh merchant and its test-environment tenant: how most tests begin. */
export const freshTenant = (input: Partial<MerchantInput> = {}) =>
  Effect.map(freshMerchant(input), (merchant) => ({ merchant, tenant: tenantOf(merchant) }))

/** A unique phone number. */
export const freshPhone = Effect.map(uuid, (id) => `+960 ${id}`)

/** A complete mandate of `tenant`, `INITIATED` around `T0`, with `overrides`. */
export const newMandate = (tenant: Ids.Tenant, overrides: Partial<Mandate.Mandate> = {}) =>
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

export const insertMandate = (tenant: Ids.Tenant, overrides: Partial<Mandate.Mandate> = {}) =>
  Effect.gen(function* () {
    const m = yield* newMandate(tenant, overrides)
    yield* (yield* Store.MandatesStore).insert(m)
    return m
  })

export class Rollback extends Data.TaggedError("Rollback") {}

/** Runs `body` in a transaction that is then rolled back, so the test leaves nothing behind. */
export const rolledBack = <A, E, R>(body: Effect.Effect<A, E, R>) =>
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

export const ids = (ms: ReadonlyArray<{ readonly id: string }>) => ms.map((m) => m.id)

/** The far past that only the global-method tests use. */
export const Era = DateTime.unsafeMake("1950-06-15T00:00:00Z")

/** Whether `exit` is a defect: what a store does when a statement breaks a constraint of the schema. */
export const isDefect = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) && Cause.isDie(exit.cause)

export const freshQrid = Effect.flatMap(Crypto.Crypto, (c) =>
  Effect.map(c.bytes(QrScheme.QridBytes), QrScheme.makeQrid)
)

/** A fresh merchant with one outlet. */
export const merchantWithOutlet = (input: Partial<MerchantInput> = {}) =>
  Effect.gen(function* () {
    const { merchant, tenant } = yield* freshTenant(input)
    const outlet = yield* (yield* Seed).outlet(merchant.id, "Majeedhee Magu")
    return { merchant, outlet, tenant }
  })

/**
 * A complete static code of `tenant` at `outletId`, created at `T0`, with `overrides`. The payload is
 * opaque to a store, so it is not a real one here; it holds Thaana, so text is checked to round-trip.
 */
export const newQrCode = (tenant: Ids.Tenant, outletId: number, overrides: Partial<QrCode.QrCode> = {}) =>
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
export const dynamic = (amount = 12_550): Partial<QrCode.QrCode> => ({
  type: "DYNAMIC",
  amount,
  expiresAt: plus(T0, 15 * minute)
})

export const insertQrCode = (tenant: Ids.Tenant, outletId: number, overrides: Partial<QrCode.QrCode> = {}) =>
  Effect.gen(function* () {
    const code = yield* newQrCode(tenant, outletId, overrides)
    yield* (yield* Store.QrCodesStore).insert(code)
    return code
  })

/** A payment of `code` by `customerId`, with `fee` out of `amount`. */
export const newQrPayment = (
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
export const imageBytes = (seed: number, size = 20_000): Uint8Array =>
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
export const newSession = (
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

export const insertSession = (tenant: Ids.Tenant, options: Parameters<typeof newSession>[1] = {}) =>
  Effect.gen(function* () {
    const session = yield* newSession(tenant, options)
    yield* (yield* Store.CheckoutSessionsStore).insert(session)
    return session
  })

/** A subscription session of `tenant` opened a minute before `at`, and its first payment settled at `at`. */
export const activation = (
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

export type Activated = Effect.Effect.Success<ReturnType<typeof activation>>

/** The rows an activation writes: the session (opened, then complete), the subscription, invoice 0. */
export const storeActivation = (a: Activated, dueAt?: DateTime.Utc | null) =>
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
export const paidAt = (inv: Invoice.Invoice, at: DateTime.Utc, paymentId: string): Invoice.Invoice =>
  Either.getOrThrow(Either.flatMap(Invoice.startAttempt(inv, at), (c) => Invoice.succeed(c, paymentId, at)))

export const isoOf = (t: DateTime.Utc | undefined) => t && DateTime.formatIso(t)
