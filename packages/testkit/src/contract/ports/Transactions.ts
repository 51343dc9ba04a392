/**
 * The transactions part of the store contract: a transaction that fails, dies or is interrupted leaves no
 * trace, a row found for update stays locked until the end, uncommitted writes are never seen, and nested
 * transactions join the outer one. `StoreContract.suite` runs it on every adapter; every test makes its own
 * merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Approval, Events, Idempotency, Ids, Notifications, Store, Wallet } from "@laari/core"
import { Deferred, Effect, Either, Exit, Fiber } from "effect"
import { SandboxPayerBalance, Seed } from "../../Seed.js"
import {
  type It,
  Rollback,
  T0,
  freshMerchant,
  freshTenant,
  ids,
  insertMandate,
  newMandate,
  tenantOf,
  uuid
} from "../support/Helpers.js"

export const tests = (it: It): void => {
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
          const idempotency = yield* Store.IdempotencyStore
          const outbox = yield* Events.Outbox
          const notifications = yield* Notifications.Notifications
          const wallet = yield* Wallet.Wallet
          const { merchant, tenant } = yield* freshTenant()
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
        const { merchant, tenant } = yield* freshTenant()
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
}
