import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, HashMap } from "effect"
import * as MemoryDb from "../src/MemoryDb.js"

/** A tiny table: one counter in `balances`. */
const read = (db: MemoryDb.MemoryDbService) =>
  Effect.map(db.get, (t) => HashMap.get(t.balances, "n").pipe((o) => (o._tag === "Some" ? o.value : 0)))
const write = (db: MemoryDb.MemoryDbService, n: number) =>
  db.update((t) => ({ ...t, balances: HashMap.set(t.balances, "n", n) }))

describe("MemoryDb", () => {
  it.live("a transaction holds the only permit: concurrent read-modify-writes lose nothing", () =>
    Effect.gen(function* () {
      const db = yield* MemoryDb.make()
      const log: Array<string> = []
      const increment = (i: number) =>
        db.withTransaction(
          Effect.gen(function* () {
            log.push(`start ${i}`)
            const n = yield* read(db)
            yield* Effect.sleep("1 millis")
            yield* write(db, n + 1)
            log.push(`end ${i}`)
          })
        )
      yield* Effect.all(
        Array.from({ length: 20 }, (_, i) => increment(i)),
        { concurrency: "unbounded" }
      )
      expect(yield* read(db)).toBe(20)
      // Never two transactions open at once: every start is followed by its own end.
      for (let k = 0; k < log.length; k += 2) expect(log[k + 1]).toBe(log[k]!.replace("start", "end"))
    })
  )

  it.live("nested calls, and fibers forked inside, join the transaction instead of waiting for it", () =>
    Effect.gen(function* () {
      const db = yield* MemoryDb.make()
      yield* db
        .withTransaction(
          Effect.gen(function* () {
            yield* db.withTransaction(write(db, 1))
            const child = yield* Effect.fork(
              db.withTransaction(Effect.flatMap(read(db), (n) => write(db, n + 1)))
            )
            yield* Fiber.join(child)
          })
        )
        .pipe(Effect.timeout("1 second"))
      expect(yield* read(db)).toBe(2)
    })
  )

  const endings = {
    fails: Effect.fail("no"),
    dies: Effect.die("boom"),
    "is interrupted": Effect.interrupt
  } as const
  for (const [how, end] of Object.entries(endings)) {
    it.live(`a transaction that ${how} is rolled back, nested writes included`, () =>
      Effect.gen(function* () {
        const db = yield* MemoryDb.make()
        yield* write(db, 7)
        const exit = yield* Effect.exit(
          db.withTransaction(
            Effect.gen(function* () {
              yield* write(db, 8)
              yield* db.withTransaction(write(db, 9))
              expect(yield* read(db)).toBe(9)
              return yield* end
            })
          )
        )
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* read(db)).toBe(7)
        // The permit was released.
        yield* write(db, 10).pipe(Effect.timeout("1 second"))
        expect(yield* read(db)).toBe(10)
      })
    )
  }

  it.live("a fiber interrupted from outside mid-transaction leaves nothing behind", () =>
    Effect.gen(function* () {
      const db = yield* MemoryDb.make()
      const written = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        db.withTransaction(
          Effect.zipRight(write(db, 1), Effect.zipRight(Deferred.succeed(written, undefined), Effect.never))
        )
      )
      yield* Deferred.await(written)
      yield* Fiber.interrupt(fiber)
      expect(yield* read(db)).toBe(0)
    })
  )

  it.live("a reader waits for an open transaction, then sees only what committed", () =>
    Effect.gen(function* () {
      const db = yield* MemoryDb.make()
      const written = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const writer = yield* Effect.fork(
        db.withTransaction(
          Effect.gen(function* () {
            yield* write(db, 1)
            yield* Deferred.succeed(written, undefined)
            yield* Deferred.await(release)
            return yield* Effect.fail("rolled back")
          })
        )
      )
      yield* Deferred.await(written)
      const reader = yield* Effect.fork(read(db))
      yield* Effect.sleep("20 millis")
      // Still waiting: reading now would show the uncommitted 1.
      expect(reader.unsafePoll()).toBeNull()
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.await(writer)
      expect(yield* Fiber.join(reader)).toBe(0)
    })
  )

  it.effect("tables are values: a snapshot never changes after later writes", () =>
    Effect.gen(function* () {
      const db = yield* MemoryDb.make()
      yield* write(db, 1)
      const snapshot = yield* db.get
      yield* write(db, 2)
      expect(HashMap.get(snapshot.balances, "n")).toEqual(HashMap.get(HashMap.make(["n", 1]), "n"))
      expect(yield* read(db)).toBe(2)
    })
  )
})
