/**
 * Core's `KeyedCommands` over the memory adapters: a command runs once per key, a retry replays what the
 * first run stored, the same key with another request is refused, an answer that fails rolls the claim
 * back with everything else, so the key can be used again, and a refusal stored under the key commits
 * without the refused command's writes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ids, Idempotency, KeyedCommands, Notifications, Store } from "@laari/core"
import { DateTime, Effect, Either, Ref } from "effect"
import * as Testkit from "../src/Testkit.js"

const world = Effect.provide(Testkit.layer())

let keys = 0
const scopeOf = (merchantId = Ids.MerchantId.make("7f1c1a52-9d1e-4c9b-9a43-0c1a5b2d3e4f")) => ({
  merchantId,
  environment: "test" as const,
  method: "POST",
  path: "/refunds",
  key: `key-${++keys}`
})

/** A command that counts its runs and answers the run's number. */
const counted = Effect.map(Ref.make(0), (runs) => ({
  runs,
  command: Ref.updateAndGet(runs, (n) => n + 1)
}))

const customerId = Ids.CustomerId.make("5a0e7c2b-3d4f-4a1b-9c8d-7e6f5a4b3c2d")

/** A write to roll back: a notification to `customerId`, read back with `notified`. */
const notify = (notifications: Notifications.NotificationsService, id: string) =>
  Effect.flatMap(DateTime.now, (createdAt) =>
    notifications.send({
      id,
      customerId,
      environment: "test",
      kind: "refund",
      title: "Refund",
      body: "A refund",
      data: {},
      createdAt
    })
  )

const notified = Effect.flatMap(Notifications.Notifications, (notifications) =>
  notifications.list(customerId)
)

/** The ids of the notifications sent, sorted. */
const ids = Effect.map(notified, (list) => list.map((n) => n.id).sort())

/**
 * Stores the run's number as the response; a replay answers the stored number, negated. A command's
 * failure fails the answer, which rolls everything back.
 */
const answers: KeyedCommands.Answers<Either.Either<number, unknown>, number, unknown, never> = {
  ran: (outcome) =>
    Either.match(outcome, {
      onLeft: Effect.fail,
      onRight: (n) => Effect.succeed({ response: { status: 201, headers: {}, body: String(n) }, result: n })
    }),
  replayed: (response) => Effect.succeed(-Number(response.body))
}

/** Stores a refusal as a 402 answer, and answers it (a replay answers what was stored). */
const storing: KeyedCommands.Answers<Either.Either<number, unknown>, number | string, never, never> = {
  ran: (outcome) =>
    Effect.succeed(
      Either.match(outcome, {
        onLeft: (e) => ({ response: { status: 402, headers: {}, body: String(e) }, result: String(e) }),
        onRight: (n) => ({ response: { status: 201, headers: {}, body: String(n) }, result: n })
      })
    ),
  replayed: (response) => Effect.succeed(`replayed ${response.body}`)
}

describe("KeyedCommands", () => {
  it.effect("runs the command once; a retry replays the stored answer without running it", () =>
    Effect.gen(function* () {
      const keyed = yield* KeyedCommands.KeyedCommands
      const { runs, command } = yield* counted
      const scope = scopeOf()
      expect(yield* keyed.once({ scope, fingerprint: "a" }, command, answers)).toBe(1)
      expect(yield* keyed.once({ scope, fingerprint: "a" }, command, answers)).toBe(-1)
      expect(yield* keyed.once({ scope, fingerprint: "a" }, command, answers)).toBe(-1)
      expect(yield* Ref.get(runs)).toBe(1)
      // Another key, or the same key of another merchant, is another command.
      expect(
        yield* keyed.once({ scope: { ...scope, key: "other" }, fingerprint: "a" }, command, answers)
      ).toBe(2)
      const elsewhere = scopeOf(Ids.MerchantId.make("0b6f3c1e-2a4d-4e5f-8a9b-1c2d3e4f5a6b"))
      expect(
        yield* keyed.once({ scope: { ...elsewhere, key: scope.key }, fingerprint: "a" }, command, answers)
      ).toBe(3)
    }).pipe(world)
  )

  it.effect("refuses the same key with another request, and runs nothing", () =>
    Effect.gen(function* () {
      const keyed = yield* KeyedCommands.KeyedCommands
      const { runs, command } = yield* counted
      const scope = scopeOf()
      yield* keyed.once({ scope, fingerprint: "a" }, command, answers)
      const refused = yield* Effect.either(keyed.once({ scope, fingerprint: "b" }, command, answers))
      expect(Either.isLeft(refused) && refused.left).toBeInstanceOf(Idempotency.KeyReused)
      expect(yield* Ref.get(runs)).toBe(1)
    }).pipe(world)
  )

  it.effect("an answer that fails rolls the claim back: nothing is stored, and the key runs again", () =>
    Effect.gen(function* () {
      const keyed = yield* KeyedCommands.KeyedCommands
      const { command } = yield* counted
      const scope = scopeOf()
      const refusing: KeyedCommands.Answers<Either.Either<number, unknown>, number, unknown, never> = {
        ...answers,
        ran: () => Effect.fail("refused")
      }
      // The command writes (a notification): the refusal takes the write back with the claim.
      const notifications = yield* Notifications.Notifications
      const writing = Effect.zipRight(notify(notifications, `n-${scope.key}`), command)
      expect(yield* Effect.flip(keyed.once({ scope, fingerprint: "a" }, writing, refusing))).toBe("refused")
      expect(yield* notified).toEqual([])
      // Even with another request: the failed one left no record under the key.
      expect(yield* keyed.once({ scope, fingerprint: "b" }, command, answers)).toBe(2)
      expect(yield* keyed.once({ scope, fingerprint: "b" }, command, answers)).toBe(-2)
    }).pipe(world)
  )

  it.effect("a failing command stores nothing; `ahead` runs first, in the same transaction", () =>
    Effect.gen(function* () {
      const keyed = yield* KeyedCommands.KeyedCommands
      const order = yield* Ref.make<ReadonlyArray<string>>([])
      const note = (what: string) => Ref.update(order, (list) => [...list, what])
      const scope = scopeOf()
      const failing = Effect.zipRight(note("command"), Effect.fail("declined" as const))
      // `ahead` writes too: the command's failure takes that write back with the claim.
      const notifications = yield* Notifications.Notifications
      const ahead = Effect.zipRight(note("ahead"), Effect.orDie(notify(notifications, `n-${scope.key}`)))
      expect(yield* Effect.flip(keyed.once({ scope, fingerprint: "a", ahead }, failing, answers))).toBe(
        "declined"
      )
      expect(yield* Ref.get(order)).toEqual(["ahead", "command"])
      expect(yield* notified).toEqual([])
      expect(yield* keyed.once({ scope, fingerprint: "a" }, Effect.succeed(7), answers)).toBe(7)
    }).pipe(world)
  )

  it.effect("a refusal stored under the key commits without what the refused command rolled back", () =>
    Effect.gen(function* () {
      const keyed = yield* KeyedCommands.KeyedCommands
      const tx = yield* Store.Transactor
      const notifications = yield* Notifications.Notifications
      const scope = scopeOf()
      // Before the claim (`ahead`) writes stay; the refused command's transaction is undone, its
      // answer stays.
      const ahead = Effect.orDie(notify(notifications, `ahead-${scope.key}`))
      const refused = tx.withTransaction(
        Effect.zipRight(notify(notifications, `n-${scope.key}`), Effect.fail("declined"))
      )
      expect(yield* keyed.once({ scope, fingerprint: "a", ahead }, refused, storing)).toBe("declined")
      expect(yield* ids).toEqual([`ahead-${scope.key}`])
      // The refusal is what the key answers now, without running anything.
      const again = tx.withTransaction(Effect.as(notify(notifications, `again-${scope.key}`), 1))
      expect(yield* keyed.once({ scope, fingerprint: "a" }, again, storing)).toBe("replayed declined")
      expect(yield* ids).toEqual([`ahead-${scope.key}`])
      // A command that succeeds keeps its writes with its answer.
      const other = { ...scope, key: `${scope.key}-ok` }
      expect(yield* keyed.once({ scope: other, fingerprint: "a" }, again, storing)).toBe(1)
      expect(yield* ids).toEqual([`again-${scope.key}`, `ahead-${scope.key}`])
    }).pipe(world)
  )

  it.effect("a refusal keeps what the command committed on the way to it, as without a key", () =>
    Effect.gen(function* () {
      const keyed = yield* KeyedCommands.KeyedCommands
      const tx = yield* Store.Transactor
      const notifications = yield* Notifications.Notifications
      const scope = scopeOf()
      // As a refused charge records its failure: a transaction that commits, then the refusal; and a
      // second one, nested in a transaction of its own, that fails.
      const failed = tx.withTransaction(
        Effect.zipRight(
          tx.withTransaction(notify(notifications, `inner-${scope.key}`)),
          Effect.fail("undone")
        )
      )
      const refused = tx
        .withTransaction(notify(notifications, `failed-${scope.key}`))
        .pipe(Effect.zipRight(Effect.either(failed)), Effect.zipRight(Effect.fail("declined")))
      expect(yield* keyed.once({ scope, fingerprint: "a" }, refused, storing)).toBe("declined")
      expect(yield* ids).toEqual([`failed-${scope.key}`])
    }).pipe(world)
  )
})
