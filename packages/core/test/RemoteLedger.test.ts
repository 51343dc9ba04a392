import { describe, expect, it } from "@effect/vitest"
import { Errors, type Ids, Money, Movement, RemoteLedger } from "@laari/core"
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
