import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect } from "effect"
import fc from "fast-check"
import * as Idempotency from "../src/kernel/Idempotency.js"
import type { IdempotencyStoreService } from "../src/kernel/IdempotencyStore.js"
import type { MerchantId } from "../src/kernel/Ids.js"

const t0 = DateTime.unsafeMake("2026-03-31T10:00:00Z")
const at = (seconds: number) => DateTime.add(t0, { seconds })
const scope: Idempotency.Scope = {
  merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
  environment: "test",
  method: "POST",
  path: "/mandates",
  key: "k1"
}
const response: Idempotency.StoredResponse = { status: 201, headers: {}, body: '{"id":"1"}' }
const record = (overrides: Partial<Idempotency.Record> = {}): Idempotency.Record => ({
  scope,
  fingerprint: "fp",
  response: null,
  createdAt: t0,
  ...overrides
})
const hours = 3600

describe("decide", () => {
  it.each<[string, Idempotency.Record | undefined, string, number, Idempotency.Decision["_tag"]]>([
    ["nothing recorded", undefined, "fp", 0, "Proceed"],
    ["the same request, completed", record({ response }), "fp", 10, "Replay"],
    ["a completed record at 71:59:59", record({ response }), "fp", 72 * hours - 1, "Replay"],
    ["a completed record after 72 h", record({ response }), "fp", 72 * hours, "Proceed"],
    ["another body", record({ response }), "other", 10, "Mismatch"],
    ["another body after 72 h", record({ response }), "other", 72 * hours, "Proceed"],
    // A committed record without a response was left by an older version whose command never committed.
    ["a record left without a response", record(), "fp", 1, "Proceed"],
    ["a record left without a response, another body", record(), "other", 1, "Proceed"]
  ])("%s", (_, existing, fingerprint, seconds, tag) => {
    const decision = Idempotency.decide(existing, fingerprint, at(seconds))
    expect(decision._tag).toBe(tag)
    if (decision._tag === "Replay") expect(decision.response).toEqual(response)
  })

  it("for any record and moment: the decision follows from age, fingerprint and response", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 * hours }),
        fc.boolean(),
        fc.boolean(),
        (seconds, completed, sameBody) => {
          const existing = record(completed ? { response } : {})
          const decision = Idempotency.decide(existing, sameBody ? "fp" : "other", at(seconds))
          const expected =
            !completed || seconds >= Idempotency.RetentionHours * hours
              ? "Proceed"
              : sameBody
                ? "Replay"
                : "Mismatch"
          expect(decision._tag).toBe(expected)
        }
      )
    )
  })
})

/**
 * A store as the adapters keep one (a record per key, claimed once), holding no lock: `busy` stands for
 * another transaction holding the key past the bounded wait. It records which methods ran.
 */
const recording = (busy = false) => {
  const records = new Map<string, Idempotency.Record>()
  const calls: Array<string> = []
  const store: IdempotencyStoreService = {
    claim: (s, fingerprint, now) =>
      Effect.sync((): Idempotency.Claim => {
        calls.push("claim")
        if (busy) return { _tag: "Busy" }
        const held = records.get(s.key)
        if (held !== undefined) return { _tag: "Held", record: held }
        records.set(s.key, { scope: s, fingerprint, response: null, createdAt: now })
        return { _tag: "Claimed" }
      }),
    replace: (s, fingerprint, now) =>
      Effect.sync(() => {
        calls.push("replace")
        records.set(s.key, { scope: s, fingerprint, response: null, createdAt: now })
      }),
    complete: (s, stored) =>
      Effect.sync(() => {
        const held = records.get(s.key)
        if (held !== undefined) records.set(s.key, { ...held, response: stored })
      }),
    purge: () => Effect.succeed(0)
  }
  let runs = 0
  /** `run` with a command that counts its runs, its value stored as the callers store theirs. */
  const keyed = (fingerprint: string, seconds: number) =>
    Effect.tap(
      Idempotency.run(
        store,
        scope,
        fingerprint,
        at(seconds),
        Effect.sync(() => ++runs)
      ),
      (outcome) =>
        outcome._tag === "Ran"
          ? store.complete(scope, { ...response, body: String(outcome.value) })
          : Effect.void
    )
  return { store, records, calls, keyed, runs: () => runs }
}

describe("run", () => {
  it.effect("a fresh key runs the command once, over the record the claim made", () =>
    Effect.gen(function* () {
      const s = recording()
      expect(yield* s.keyed("fp", 0)).toEqual({ _tag: "Ran", value: 1 })
      expect(s.calls).toEqual(["claim"])
      expect(s.records.get("k1")).toMatchObject({ fingerprint: "fp", response: { body: "1" } })
    })
  )

  it.effect("the same request again replays what the first stored, and runs nothing", () =>
    Effect.gen(function* () {
      const s = recording()
      yield* s.keyed("fp", 0)
      expect(yield* s.keyed("fp", 10)).toEqual({ _tag: "Replayed", response: { ...response, body: "1" } })
      expect(s.runs()).toBe(1)
      expect(s.calls).toEqual(["claim", "claim"])
    })
  )

  it.effect("another request under the key is refused, and runs nothing", () =>
    Effect.gen(function* () {
      const s = recording()
      yield* s.keyed("fp", 0)
      expect(yield* Effect.flip(s.keyed("other", 10))).toBeInstanceOf(Idempotency.KeyReused)
      expect(s.runs()).toBe(1)
    })
  )

  it.effect("a key another transaction holds is in flight, and runs nothing", () =>
    Effect.gen(function* () {
      const s = recording(true)
      expect(yield* Effect.flip(s.keyed("fp", 0))).toBeInstanceOf(Idempotency.KeyInFlight)
      expect(s.runs()).toBe(0)
      expect(s.records.size).toBe(0)
    })
  )

  it.effect("an expired record is replaced, then the command runs and its response is the key's", () =>
    Effect.gen(function* () {
      const s = recording()
      yield* s.keyed("fp", 0)
      const later = Idempotency.RetentionHours * hours
      expect(yield* s.keyed("other", later)).toEqual({ _tag: "Ran", value: 2 })
      expect(s.calls).toEqual(["claim", "claim", "replace"])
      expect(s.records.get("k1")).toMatchObject({
        fingerprint: "other",
        createdAt: at(later),
        response: { body: "2" }
      })
      // The new record is the one a retry meets: replayed, not refused.
      expect(yield* s.keyed("other", later + 1)).toMatchObject({ _tag: "Replayed" })
    })
  )

  it.effect("a record left without a response is replaced too", () =>
    Effect.gen(function* () {
      const s = recording()
      s.records.set("k1", record({ fingerprint: "old" }))
      expect(yield* s.keyed("fp", 1)).toEqual({ _tag: "Ran", value: 1 })
      expect(s.calls).toEqual(["claim", "replace"])
    })
  )

  it.effect("a command's failure is the caller's, with nothing stored", () =>
    Effect.gen(function* () {
      const s = recording()
      const failed = Idempotency.run(s.store, scope, "fp", t0, Effect.fail("refused" as const))
      expect(yield* Effect.flip(failed)).toBe("refused")
      expect(s.records.get("k1")?.response).toBeNull()
    })
  )
})
