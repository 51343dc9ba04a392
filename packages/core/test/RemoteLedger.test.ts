import { describe, expect, it } from "@effect/vitest"
import { Errors, type Ids, Money, Movement, RemoteLedger } from "@laari/core"
import type { MovementsStoreService } from "../src/wallet/WalletStore.js"
import { Cause, DateTime, Effect, Exit, Option } from "effect"

const movement = Movement.pending(
  {
    id: "0b9f3c2e-4a1d-4c7e-9f21-5d6a7b8c9d0e",
    merchantId: "m" as Ids.MerchantId,
    environment: "live",
    kind: "payment",
    cause: "invoice",
    holdKey: null,
    causeId: "c",
    customerId: "p" as Ids.CustomerId,
    from: "w-payer",
    to: "w-merchant",
    feeTo: null,
    amount: Money.Laari(10_000),
    fee: Money.Laari(0),
    memo: "memo",
    detail: {}
  },
  DateTime.unsafeMake("2026-12-02T08:00:00Z")
)

/** A ledger answering `answer` to every send, counting how often its breaker was read. */
const ledgerAnswering = (answer: Movement.Answer, accepting = true) => {
  const asked = { accepting: 0, sent: 0 }
  const ledger = {
    accepting: Effect.sync(() => {
      asked.accepting++
      return accepting
    }),
    send: () =>
      Effect.sync(() => {
        asked.sent++
        return answer
      })
  } as unknown as RemoteLedger.RemoteLedgerService
  return { ledger, asked }
}

describe("RemoteLedger.guard", () => {
  it.effect("passes the built-in ledger without asking anything", () =>
    Effect.gen(function* () {
      expect(Exit.isSuccess(yield* Effect.exit(RemoteLedger.guard(undefined)))).toBe(true)
    })
  )

  it.effect("passes while the breaker is closed", () =>
    Effect.gen(function* () {
      const { ledger, asked } = ledgerAnswering({ _tag: "unknown", cause: "timeout" })
      expect(Exit.isSuccess(yield* Effect.exit(RemoteLedger.guard({ ledger })))).toBe(true)
      expect(asked).toEqual({ accepting: 1, sent: 0 })
    })
  )

  it.effect("refuses with the wallet's unavailability while the breaker is open, nothing sent", () =>
    Effect.gen(function* () {
      const { ledger, asked } = ledgerAnswering({ _tag: "unknown", cause: "timeout" }, false)
      const failed = yield* Effect.flip(RemoteLedger.guard({ ledger }))
      expect(failed).toBeInstanceOf(Errors.ServiceUnavailable)
      expect(failed).not.toBeInstanceOf(Errors.PaymentOutcomeUnknown)
      expect(failed.message).toBe(Errors.walletUnavailable().message)
      expect(asked.sent).toBe(0)
    })
  )
})

describe("RemoteLedger.pending", () => {
  const settledWith = (answer: Movement.Answer) =>
    Effect.gen(function* () {
      const { ledger } = ledgerAnswering(answer)
      const settled: Array<[string, Movement.Settling, Movement.SettledBy]> = []
      const steps = RemoteLedger.pending({ ledger }, movement, (id, a, by) =>
        Effect.sync(() => {
          settled.push([id, a, by])
          return Effect.succeed(a._tag)
        })
      )
      const exit = yield* Effect.exit(RemoteLedger.sendThenSettle(steps))
      return { exit, settled }
    })

  it.effect("settles a known answer as the call's", () =>
    Effect.gen(function* () {
      const { exit, settled } = yield* settledWith({ _tag: "refused", reason: "insufficient-balance" })
      expect(exit).toEqual(Exit.succeed("refused"))
      expect(settled).toEqual([[movement.id, { _tag: "refused", reason: "insufficient-balance" }, "answer"]])
    })
  )

  it.effect("leaves an unknown answer unsettled, failing with PaymentOutcomeUnknown", () =>
    Effect.gen(function* () {
      const { exit, settled } = yield* settledWith({ _tag: "unknown", cause: "timeout" })
      const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
      expect(Option.getOrUndefined(failure)).toBeInstanceOf(Errors.PaymentOutcomeUnknown)
      expect(settled).toEqual([])
    })
  )
})

/** A movements store over one map, recording each update. */
const storeOf = (...held: ReadonlyArray<Movement.Movement>) => {
  const rows = new Map(held.map((m) => [m.id, m]))
  const updates: Array<Movement.Movement> = []
  const movements = {
    lock: (id: string) => Effect.sync(() => rows.get(id)),
    update: (m: Movement.Movement) =>
      Effect.sync(() => {
        updates.push(m)
        rows.set(m.id, m)
      })
  } as unknown as MovementsStoreService
  return { movements, updates }
}

const defectOf = <A, E>(exit: Exit.Exit<A, E>): string | undefined =>
  Exit.isFailure(exit)
    ? Option.match(Cause.dieOption(exit.cause), {
        onNone: () => undefined,
        onSome: (d) => (d instanceof Error ? d.message : String(d))
      })
    : undefined

describe("RemoteLedger.remoteFor and remoteOf", () => {
  const remoteHandling = (handled: Ids.Environment) => {
    const asked: Array<Ids.Environment> = []
    const ledger = {
      handles: (e: Ids.Environment) => {
        asked.push(e)
        return e === handled
      }
    } as unknown as RemoteLedger.RemoteLedgerService
    return { remote: { ledger, movements: storeOf().movements }, asked }
  }

  it("gives the core's ports only for an environment whose money lives there", () => {
    const { remote, asked } = remoteHandling("live")
    expect(RemoteLedger.remoteFor(remote, "live")).toBe(remote)
    expect(RemoteLedger.remoteFor(remote, "test")).toBeUndefined()
    expect(asked).toEqual(["live", "test"])
    expect(RemoteLedger.remoteFor(undefined, "live")).toBeUndefined()
  })

  it("makes the ports only when the host provides both", () => {
    const { remote } = remoteHandling("live")
    expect(RemoteLedger.remoteOf(Option.some(remote.ledger), Option.some(remote.movements))).toEqual(remote)
    expect(RemoteLedger.remoteOf(Option.some(remote.ledger), Option.none())).toBeUndefined()
    expect(RemoteLedger.remoteOf(Option.none(), Option.some(remote.movements))).toBeUndefined()
    expect(RemoteLedger.remoteOf(Option.none(), Option.none())).toBeUndefined()
  })
})

describe("RemoteLedger.settleOnce", () => {
  const answer: Movement.Settling = { _tag: "refused", reason: "wallet-frozen" }
  type Outcome =
    | { readonly pending: Movement.Movement; readonly now: DateTime.Utc }
    | { readonly settled: Movement.Movement }
  const run = (movements: MovementsStoreService, id = movement.id) => {
    const calls: Array<string> = []
    const effect = RemoteLedger.settleOnce<Outcome, never, never>(
      movements,
      id,
      answer,
      "status",
      (pending, now) =>
        Effect.sync(() => {
          calls.push("first")
          return { pending, now }
        }),
      (settled) =>
        Effect.sync(() => {
          calls.push("again")
          return { settled }
        })
    )
    return { effect, calls }
  }

  it.effect("settles a pending movement once: writes it settled, then runs `first` with it as it stood", () =>
    Effect.gen(function* () {
      const { movements, updates } = storeOf(movement)
      const { effect, calls } = run(movements)
      const result = yield* effect
      const now = yield* DateTime.now
      expect(calls).toEqual(["first"])
      expect(result).toEqual({ pending: movement, now })
      expect(updates).toEqual([Movement.settle(movement, answer, "status", now)])
    })
  )

  it.effect("runs `again` with a movement someone settled before, writing nothing", () =>
    Effect.gen(function* () {
      const settled = Movement.settle(movement, { _tag: "cancelled" }, "cancel", DateTime.unsafeMake(0))
      const { movements, updates } = storeOf(settled)
      const { effect, calls } = run(movements)
      expect(yield* effect).toEqual({ settled })
      expect(calls).toEqual(["again"])
      expect(updates).toEqual([])
    })
  )

  it.effect("dies when the movement is lost", () =>
    Effect.gen(function* () {
      const { movements, updates } = storeOf()
      const { effect, calls } = run(movements)
      expect(defectOf(yield* Effect.exit(effect))).toBe(`movement ${movement.id} lost`)
      expect(calls).toEqual([])
      expect(updates).toEqual([])
    })
  )
})

describe("RemoteLedger.tenantMovement", () => {
  const tenant = { merchantId: movement.merchantId, environment: movement.environment }

  it.effect("reads the tenant's own movement", () =>
    Effect.gen(function* () {
      const { movements } = storeOf(movement)
      expect(yield* RemoteLedger.tenantMovement(movements, tenant, movement.id)).toBe(movement)
    })
  )

  it.effect("dies on another merchant's, another environment's or a missing movement", () =>
    Effect.gen(function* () {
      const { movements } = storeOf(movement)
      const message = `movement ${movement.id} is not this tenant's`
      for (const other of [
        { ...tenant, merchantId: "n" as Ids.MerchantId },
        { ...tenant, environment: "test" as const }
      ])
        expect(defectOf(yield* Effect.exit(RemoteLedger.tenantMovement(movements, other, movement.id)))).toBe(
          message
        )
      expect(
        defectOf(yield* Effect.exit(RemoteLedger.tenantMovement(storeOf().movements, tenant, movement.id)))
      ).toBe(message)
    })
  )
})

describe("RemoteLedger.pending without a connector, and answeredBy", () => {
  it.effect("dies on the call when no connector is configured, and settles nothing", () =>
    Effect.gen(function* () {
      const settled: Array<string> = []
      const steps = RemoteLedger.pending(undefined, movement, (id) =>
        Effect.sync(() => {
          settled.push(id)
          return Effect.void
        })
      )
      expect(defectOf(yield* Effect.exit(RemoteLedger.sendThenSettle(steps)))).toBe("no wallet connector")
      expect(settled).toEqual([])
    })
  )

  it.effect("passes the settlement through `f` and keeps the call", () =>
    Effect.gen(function* () {
      const { ledger, asked } = ledgerAnswering({ _tag: "posted", postedAt: null })
      const steps = RemoteLedger.pending({ ledger }, movement, (_id, a) =>
        Effect.succeed(Effect.succeed(a._tag))
      )
      const answered = RemoteLedger.answeredBy(steps, (settlement) =>
        Effect.map(settlement, (tag) => `answered ${tag}`)
      )
      expect(answered.send).toBe(steps.send)
      expect(yield* RemoteLedger.sendThenSettle(answered)).toBe("answered posted")
      expect(yield* answered.settle({ _tag: "cancelled" })).toBe("answered cancelled")
      expect(asked.sent).toBe(1)
    })
  )
})
