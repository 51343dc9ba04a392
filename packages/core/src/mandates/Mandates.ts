/**
 * The mandate service: every command loads, decides with a pure function of `Mandate`, and writes, in
 * one transaction.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import * as Phone from "../kernel/Phone.js"
import {
  type ApprovalLimited,
  Approvals,
  type ApprovalRefused,
  type ChallengeNotFound
} from "../approvals/Approvals.js"
import { Audit, change } from "../audit/Audit.js"
import { Crypto } from "../kernel/Crypto.js"
import { InvalidRequest, type ServiceUnavailable } from "../kernel/Errors.js"
import * as Outbox from "../kernel/Outbox.js"
import * as MandateEvents from "./MandateEvents.js"
import * as EventType from "../kernel/EventType.js"
import { type ChallengeId, type CustomerId, MandateId, type Tenant, lookup } from "../kernel/Ids.js"
import * as Mandate from "./Mandate.js"
import * as MandateNotices from "./MandateNotices.js"
import { Notifications } from "../kernel/Notifications.js"
import { MandatesStore } from "./MandatesStore.js"
import { ChargeRefused, MandateCharges, MandateNotFound } from "./MandateCharges.js"
import { CustomersStore, MerchantsStore, registeredMerchant } from "../directory/MerchantsStore.js"
import { DuplicateReference, findOrFail } from "../kernel/Storage.js"
import { Transactor } from "../kernel/Transactor.js"
import type { MandateFilter } from "./MandatesStore.js"
import * as Work from "../kernel/Work.js"
import * as Telemetry from "../kernel/Telemetry.js"

export {
  ChargeRefused,
  type ChargeRequest,
  Charges,
  MandateNotFound,
  refusalCode
} from "./MandateCharges.js"

export class MandateNotRevocable extends Schema.TaggedError<MandateNotRevocable>()("MandateNotRevocable", {
  message: Schema.optionalWith(Schema.String, { default: () => "Mandate cannot be revoked" })
}) {}

/** A live mandate before the merchant's live mandates are enabled; `merchantId` lets the answer say how. */
export class MandatesNotEnabled extends Schema.TaggedError<MandatesNotEnabled>()("MandatesNotEnabled", {
  message: Schema.optionalWith(Schema.String, {
    default: () => "Mandates are not enabled for this merchant"
  }),
  merchantId: Schema.optional(Schema.String)
}) {}

export class MandateReferenceTaken extends Schema.TaggedError<MandateReferenceTaken>()(
  "MandateReferenceTaken",
  {
    message: Schema.optionalWith(Schema.String, {
      default: () => "A mandate with this reference already exists"
    })
  }
) {}

/** The customer's side: approving or declining a mandate that is not waiting for it. */
export class MandateNotPending extends Schema.TaggedError<MandateNotPending>()("MandateNotPending", {
  message: Schema.String
}) {}

export class CustomerNotFound extends Schema.TaggedError<CustomerNotFound>()("CustomerNotFound", {
  message: Schema.optionalWith(Schema.String, {
    default: () => "No wallet is registered to this phone number"
  })
}) {}

export class MandateNotSuspendable extends Schema.TaggedError<MandateNotSuspendable>()(
  "MandateNotSuspendable",
  {
    message: Schema.optionalWith(Schema.String, { default: () => "Only an active mandate can be suspended" })
  }
) {}

const notPending = (refusal: Mandate.TransitionRefusal) =>
  new MandateNotPending({
    message:
      refusal === "setup-expired" ? "The approval link has expired" : "Mandate is not awaiting approval"
  })

export class Mandates extends Effect.Service<Mandates>()("laari/Mandates", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const store = yield* MandatesStore
    const merchants = yield* MerchantsStore
    const customers = yield* CustomersStore
    const charging = yield* MandateCharges
    const record = yield* Outbox.emitter
    const notifications = yield* Notifications
    const approvals = yield* Approvals
    const crypto = yield* Crypto
    const audit = yield* Audit

    const merchantOf = (id: Tenant["merchantId"]) => registeredMerchant(merchants, id)
    const emit = (type: EventType.Type, m: Mandate.Mandate, object: Outbox.EventObject, now: DateTime.Utc) =>
      record(type, m, object, now)

    const notify = (
      customerId: CustomerId | null,
      m: Mandate.Mandate,
      n: MandateNotices.Notice,
      now: DateTime.Utc
    ) =>
      customerId === null
        ? Effect.void
        : Effect.flatMap(crypto.uuid, (id) =>
            notifications.send({ id, customerId, environment: m.environment, createdAt: now, ...n })
          )

    const find = findOrFail(store.find, () => new MandateNotFound())

    /** `POST /mandates`. A test-mode mandate approves itself, bound to the merchant's sandbox payer. */
    const create = Telemetry.fn("Mandates.create")(function* (tenant: Tenant, terms: Mandate.Terms) {
      const now = yield* DateTime.now
      const problems = Mandate.validateTerms(terms, now)
      if (problems.length > 0) return yield* InvalidRequest.of(problems)
      const merchant = yield* merchantOf(tenant.merchantId)
      if (tenant.environment === "live" && !merchant.features.mandatesLive)
        return yield* new MandatesNotEnabled({ merchantId: tenant.merchantId })
      const id = MandateId.make(yield* crypto.uuid)
      const initiated = Mandate.initiate(
        { id, merchantId: tenant.merchantId, environment: tenant.environment, terms },
        now
      )
      const mandate =
        tenant.environment === "test"
          ? Either.getOrThrow(Mandate.approve(initiated, merchant.sandboxPayer, now))
          : initiated
      return yield* tx.withTransaction(
        Effect.gen(function* () {
          yield* store
            .insert(mandate)
            .pipe(Effect.catchTag("DuplicateReference", () => Effect.fail(new MandateReferenceTaken())))
          if (mandate.status === "ACTIVE")
            yield* emit("mandate.activated", mandate, MandateEvents.mandateObject(mandate), now)
          yield* audit.note(change(tenant, "mandate.create", { type: "mandate", id }, { ...terms }))
          return mandate
        })
      )
    }, Telemetry.withTenant)

    const get = Telemetry.fn("Mandates.get")(
      (tenant: Tenant, idOrReference: string) => find(tenant, idOrReference),
      Telemetry.withTenant
    )

    /**
     * Before a charge's transaction runs anything else (an idempotency key's claim): says it will lock
     * this mandate next (`MandatesStoreService.lockAhead`), so the lock may travel with what comes first.
     */
    const lockAhead = (tenant: Tenant, idOrReference: string): Effect.Effect<void> =>
      store.lockAhead === undefined ? Effect.void : store.lockAhead(tenant, lookup(idOrReference))

    const list = Telemetry.fn("Mandates.list")(
      (tenant: Tenant, filter: MandateFilter) => store.list(tenant, filter),
      Telemetry.withTenant
    )

    /** Revocation by the merchant, the customer or the service: immediate and irreversible. */
    const revokeMandate = (m: Mandate.Mandate, by: Mandate.RevokedBy, now: DateTime.Utc) =>
      Effect.gen(function* () {
        const revoked = yield* Either.match(Mandate.revoke(m, by, now), {
          onLeft: () => Effect.fail(new MandateNotRevocable()),
          onRight: Effect.succeed
        })
        yield* store.update(revoked)
        yield* audit.note(change(revoked, "mandate.revoke", { type: "mandate", id: revoked.id }, { by }))
        yield* emit("mandate.revoked", revoked, MandateEvents.mandateObject(revoked), now)
        yield* notify(revoked.customerId, revoked, MandateNotices.revoked(revoked, by), now)
        return revoked
      })

    const revoke = Telemetry.fn("Mandates.revoke")(
      function* (tenant: Tenant, idOrReference: string, by: Mandate.RevokedBy = "MERCHANT") {
        const m = yield* find(tenant, idOrReference, true)
        return yield* revokeMandate(m, by, yield* DateTime.now)
      },
      tx.withTransaction,
      Telemetry.withTenant
    )

    /** The customer ends a mandate from the wallet app: no second factor. */
    const revokeAsCustomer = Telemetry.fn("Mandates.revokeAsCustomer")(function* (
      customerId: CustomerId,
      mandateId: string
    ) {
      const m = yield* store.lockById(mandateId)
      if (m === undefined || m.customerId !== customerId) return yield* new MandateNotFound()
      return yield* revokeMandate(m, "CUSTOMER", yield* DateTime.now)
    }, tx.withTransaction)

    /** Operations hold a mandate during a dispute (by id: operators act across merchants). */
    const suspend = Telemetry.fn("Mandates.suspend")(function* (mandateId: string) {
      const m = yield* store.lockById(mandateId)
      if (m === undefined) return yield* new MandateNotFound()
      const suspended = yield* Either.match(Mandate.suspend(m), {
        onLeft: () => Effect.fail(new MandateNotSuspendable()),
        onRight: Effect.succeed
      })
      yield* store.update(suspended)
      yield* audit.note(change(suspended, "mandate.suspend", { type: "mandate", id: suspended.id }))
      return suspended
    }, tx.withTransaction)

    /** A mandate as the customer's approval page shows it, before any code is asked for. */
    const forApproval = Telemetry.fn("Mandates.forApproval")(function* (mandateId: string) {
      const m = yield* tx.withTransaction(store.lockById(mandateId))
      if (m === undefined) return yield* new MandateNotFound()
      return m
    })

    const pending = (mandateId: string, now: DateTime.Utc) =>
      Effect.gen(function* () {
        const m = yield* store.lockById(mandateId)
        if (m === undefined) return yield* new MandateNotFound()
        if (m.status !== "INITIATED") return yield* notPending("not-pending")
        if (DateTime.greaterThanOrEqualTo(now, m.setupExpiresAt)) return yield* notPending("setup-expired")
        return m
      })

    /** Step one of approval: send a one-time code to the wallet registered to `phone`. */
    const requestApproval = Telemetry.fn("Mandates.requestApproval")(function* (
      mandateId: string,
      phone: string
    ) {
      const now = yield* DateTime.now
      const m = yield* pending(mandateId, now)
      const customer = yield* customers.findByPhone(m.environment, Phone.lookupKey(phone))
      if (customer === undefined) return yield* new CustomerNotFound()
      const merchant = yield* merchantOf(m.merchantId)
      return yield* approvals.issue(
        { kind: "mandate", id: m.id },
        customer,
        `the mandate "${m.title}" for ${merchant.name}`
      )
    }, tx.withTransaction)

    /** Step two: the customer's answer, approving or declining with the code. */
    const answer = (
      mandateId: string,
      challengeId: ChallengeId,
      code: string,
      decision: "approve" | "decline"
    ) =>
      Effect.gen(function* () {
        const outcome = yield* tx.withTransaction(
          Effect.gen(function* () {
            const now = yield* DateTime.now
            const m = yield* pending(mandateId, now)
            const verified = yield* approvals.verify({ kind: "mandate", id: m.id }, challengeId, code)
            if (Either.isLeft(verified)) return Either.left(verified.left)
            const customerId = verified.right.customerId
            const next = yield* Either.match(
              decision === "approve" ? Mandate.approve(m, customerId, now) : Mandate.decline(m, now),
              { onLeft: (r) => Effect.fail(notPending(r)), onRight: Effect.succeed }
            )
            yield* store.update(next)
            if (next.status === "ACTIVE") {
              yield* emit("mandate.activated", next, MandateEvents.mandateObject(next), now)
              const merchant = yield* merchantOf(m.merchantId)
              yield* notify(customerId, next, MandateNotices.approved(merchant.name, next), now)
            } else yield* emit("mandate.declined", next, MandateEvents.mandateObject(next), now)
            return Either.right(next)
          })
        )
        return yield* outcome
      })

    const approve = Telemetry.fn("Mandates.approve")(
      (mandateId: string, challengeId: ChallengeId, code: string) =>
        answer(mandateId, challengeId, code, "approve")
    )
    const decline = Telemetry.fn("Mandates.decline")(
      (mandateId: string, challengeId: ChallengeId, code: string) =>
        answer(mandateId, challengeId, code, "decline")
    )

    /** Expires lapsed approval links and mandates past `expiresAt`; returns how many it expired. */
    const expireDue = Work.sweep(tx, store.claimExpiring, (m, now) => store.update(Mandate.expire(m, now)))

    const sweep = Telemetry.fn("Mandates.sweep")((batch: number = Work.Batch) => expireDue(batch))

    const listForCustomer = Telemetry.fn("Mandates.listForCustomer")((customerId: CustomerId) =>
      store.listByCustomer(customerId)
    )

    /** Expiry as background work, for workers and the manual clock. */
    const expiryJob = Work.job("mandate-expiry", expireDue, store.nextExpiryAt)

    return {
      create,
      get,
      list,
      charge: charging.charge,
      lockAhead,
      revoke,
      revokeAsCustomer,
      suspend,
      forApproval,
      requestApproval,
      approve,
      decline,
      sweep,
      expiryJob,
      listForCustomer
    } as const
  })
}) {}

/** Every error a mandate command can end with, for exhaustive mapping at the edges. */
export type MandateError =
  | MandateNotFound
  | ChargeRefused
  | MandateNotRevocable
  | MandatesNotEnabled
  | MandateReferenceTaken
  | MandateNotPending
  | CustomerNotFound
  | MandateNotSuspendable
  | ChallengeNotFound
  | ApprovalRefused
  | ApprovalLimited
  | InvalidRequest
  | ServiceUnavailable
  | DuplicateReference
