/**
 * The rules of `POST /transfers` and its cancel: a transfer posts once whatever is repeated, an id reused
 * with another body is a conflict, and a cancel is final (a tombstone for an id never sent).
 */
import * as Connector from "@laari/core/wallet/Connector"
import { Effect } from "effect"
import {
  asked,
  cancel,
  type Context,
  epochMs,
  getTransfer,
  payerRefusal,
  payment,
  post,
  postNew,
  remember
} from "./Context.js"
import * as Http from "./Http.js"

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** `GET /transfers/{id}` says posted, with what was asked and the posting's `posted_at`. */
const expectPosted = (ctx: Context, request: Connector.TransferRequest, postedAt: string, what: string) =>
  Effect.gen(function* () {
    const held = yield* getTransfer(ctx, request.id, what)
    if (held.status !== "posted")
      return yield* Http.broken(`${what}: expected status posted, but it is ${held.status}`)
    yield* Http.check(
      asked(held) === asked(request) &&
        held.memo === request.memo &&
        held.environment === request.environment,
      () => `${what}: the core holds ${asked(held)}, but ${asked(request)} was posted`
    )
    yield* Http.check(
      epochMs(held.posted_at) === epochMs(postedAt),
      () => `${what}: posted_at ${held.posted_at}, but the POST answered ${postedAt}`
    )
  })

/** A new payment with a fee: `201 posted`, and `GET /transfers/{id}` holds it as asked. */
export const paymentPosts = (ctx: Context) =>
  Effect.gen(function* () {
    const request = payment(ctx, "payment-posts", { amount: 1000, fee: { to: ctx.setup.fee, amount: 10 } })
    const answer = yield* postNew(ctx, request, "POST a new payment")
    yield* expectPosted(ctx, request, answer.posted_at, "GET the payment just posted")
    // A payment without a fee, too.
    const plain = payment(ctx, "payment-posts", { fee: null })
    const second = yield* postNew(ctx, plain, "POST a new payment without a fee")
    yield* expectPosted(ctx, plain, second.posted_at, "GET the payment without a fee")
  })

/** The same id with the same body again: `200` and the first answer's body, nothing posted again. */
export const repeatSameAnswer = (ctx: Context) =>
  Effect.gen(function* () {
    const request = payment(ctx, "repeat-same-answer")
    const first = yield* postNew(ctx, request, "POST a new payment")
    for (const n of [1, 2]) {
      const again = yield* post(ctx, request)
      const body = yield* Http.expect(
        again,
        200,
        Connector.TransferAnswer,
        `repeat ${n} of a posted payment (a second 201 is a second posting)`
      )
      yield* Http.check(
        same(body, first),
        () =>
          `repeat ${n} of a posted payment answered ${JSON.stringify(body)}, the first ${JSON.stringify(first)}`
      )
    }
    yield* expectPosted(ctx, request, first.posted_at, "GET the repeated payment")
  })

/** Two sends of a new id at once: one `201`, one `200`, the same body. */
export const concurrentRepeat = (ctx: Context) =>
  Effect.gen(function* () {
    const request = payment(ctx, "concurrent-repeat")
    const answers = yield* Effect.all([post(ctx, request), post(ctx, request)], { concurrency: 2 })
    const bodies: Array<typeof Connector.Posted.Type> = []
    for (const answer of answers) {
      const body = yield* Http.expect(
        answer,
        [200, 201],
        Connector.TransferAnswer,
        "POST a new payment twice at once"
      )
      if (body.status !== "posted")
        return yield* Http.broken(`POST a new payment twice at once: ${Http.seen(answer)}`)
      bodies.push(body)
    }
    const statuses = answers.map((a) => a.status).sort()
    yield* Http.check(
      same(statuses, [200, 201]),
      () =>
        `the same new payment sent twice at once answered ${statuses.join(" and ")}: expected one 201 and one 200`
    )
    yield* Http.check(
      same(bodies[0], bodies[1]),
      () =>
        `the same new payment sent twice at once answered ${JSON.stringify(bodies[0])} and ${JSON.stringify(bodies[1])}`
    )
    yield* remember(ctx, request, bodies[0]!)
  })

/** The same id with another body: `409 {code: "conflict"}`, and the transfer stays as first posted. */
export const conflictingBody = (ctx: Context) =>
  Effect.gen(function* () {
    const request = payment(ctx, "conflicting-body")
    const first = yield* postNew(ctx, request, "POST a new payment")
    const others: ReadonlyArray<readonly [string, Connector.TransferRequest]> = [
      ["another amount", { ...request, amount: request.amount + 1 }],
      ["another fee", { ...request, fee: null }],
      ["another memo", { ...request, memo: `${request.memo} (changed)` }],
      ["another payee", { ...request, to: ctx.setup.fee }]
    ]
    for (const [what, body] of others) {
      const answer = yield* post(ctx, body)
      const error = yield* Http.expect(
        answer,
        409,
        Connector.ErrorBody,
        `the posted payment's id with ${what}`
      )
      yield* Http.check(
        error.code === "conflict",
        () => `the posted payment's id with ${what}: expected code conflict, but ${Http.seen(answer)}`
      )
    }
    yield* expectPosted(ctx, request, first.posted_at, "GET the payment after the conflicting bodies")
    const again = yield* post(ctx, request)
    const body = yield* Http.expect(
      again,
      200,
      Connector.TransferAnswer,
      "the first body again after the conflicts"
    )
    yield* Http.check(same(body, first), () => `the first body again answered ${JSON.stringify(body)}`)
  })

/** A cancel of an id never sent: `200 {status: "cancelled"}`, for good, and the id reads cancelled. */
export const cancelBeforePost = (ctx: Context) =>
  Effect.gen(function* () {
    const id = crypto.randomUUID()
    ctx.absent.set(id, "it was cancelled before it was ever sent")
    for (const n of [1, 2]) {
      const answer = yield* cancel(ctx, id, `cancel ${n} of an id never sent`)
      yield* Http.check(
        answer.status === "cancelled",
        () => `cancel ${n} of an id never sent answered status ${answer.status}, not cancelled`
      )
    }
    const held = yield* getTransfer(ctx, id, "GET an id cancelled before it was sent (its tombstone)")
    yield* Http.check(
      held.status === "cancelled" && held.id === id,
      () =>
        `GET an id cancelled before it was sent: ${JSON.stringify(held)}, expected {id, status: "cancelled"}`
    )
  })

/** A `POST` after the cancel of its id: `200 {id, status: "cancelled"}`, nothing moved, ever. */
export const latePostAfterCancel = (ctx: Context) =>
  Effect.gen(function* () {
    const request = payment(ctx, "late-post-after-cancel")
    ctx.absent.set(request.id, "its POST came after its cancel")
    const cancelled = yield* cancel(ctx, request.id, "cancel an id not sent yet")
    yield* Http.check(
      cancelled.status === "cancelled",
      () => `cancel of an id not sent yet answered status ${cancelled.status}`
    )
    for (const n of [1, 2]) {
      const answer = yield* post(ctx, request)
      const what = `POST ${n} of a transfer after its cancel (a tombstone must stop it)`
      const body = yield* Http.expect(answer, 200, Connector.TransferAnswer, what)
      yield* Http.check(
        body.status === "cancelled" && body.id === request.id,
        () => `${what}: ${Http.seen(answer)}, expected {id, status: "cancelled"}`
      )
    }
    const held = yield* getTransfer(ctx, request.id, "GET a transfer whose POST came after its cancel")
    yield* Http.check(
      held.status === "cancelled",
      () => `GET a transfer whose POST came after its cancel: status ${held.status}`
    )
    const late = yield* cancel(ctx, request.id, "cancel again after the late POST")
    yield* Http.check(late.status === "cancelled", () => `cancel again after the late POST: ${late.status}`)
  })

/** A cancel of a posted transfer: `200 {status: "posted"}`, for good; the transfer stays posted. */
export const cancelAfterPost = (ctx: Context) =>
  Effect.gen(function* () {
    const request = payment(ctx, "cancel-after-post")
    const first = yield* postNew(ctx, request, "POST a new payment")
    for (const n of [1, 2]) {
      const answer = yield* cancel(ctx, request.id, `cancel ${n} of a posted payment`)
      yield* Http.check(
        answer.status === "posted",
        () =>
          `cancel ${n} of a posted payment answered status ${answer.status}: a posted transfer stays posted`
      )
    }
    yield* expectPosted(ctx, request, first.posted_at, "GET a posted payment after its cancel")
    const again = yield* post(ctx, request)
    const body = yield* Http.expect(
      again,
      200,
      Connector.TransferAnswer,
      "a repeat of a posted payment after its cancel"
    )
    yield* Http.check(same(body, first), () => `a repeat after the cancel answered ${JSON.stringify(body)}`)
  })

/** A refusal, repeated: the same `422` body; the id reads refused, with its reason. */
export const refusalRepeat = (ctx: Context) =>
  Effect.gen(function* () {
    const { request, reason } = yield* payerRefusal(ctx, "refusal-repeat")
    ctx.absent.set(request.id, `it was refused (${reason})`)
    const first = yield* post(ctx, request)
    const refused = yield* Http.expect(
      first,
      422,
      Connector.Refused,
      `POST a payment of ${request.amount} laari from the payer`
    )
    yield* Http.check(
      refused.reason === reason,
      () => `the payer's payment of ${request.amount} laari was refused ${refused.reason}, expected ${reason}`
    )
    const again = yield* post(ctx, request)
    yield* Http.check(
      again.status === 422 && same(again.body, first.body),
      () => `a repeat of a refused payment: ${Http.seen(again)}, expected the first answer 422 ${first.text}`
    )
    const held = yield* getTransfer(ctx, request.id, "GET a refused payment")
    yield* Http.check(
      held.status === "refused" && held.reason === reason && asked(held) === asked(request),
      () =>
        `GET a refused payment: ${JSON.stringify(held)}, expected status refused, reason ${reason}, ${asked(request)}`
    )
  })

/** A cancel of a refused transfer: `200 {status: "refused"}`, final; a repeat is still the refusal. */
export const cancelRefused = (ctx: Context) =>
  Effect.gen(function* () {
    const { request, reason } = yield* payerRefusal(ctx, "cancel-refused")
    ctx.absent.set(request.id, `it was refused (${reason}), then cancelled`)
    const first = yield* post(ctx, request)
    yield* Http.expect(
      first,
      422,
      Connector.Refused,
      `POST a payment of ${request.amount} laari from the payer`
    )
    for (const n of [1, 2]) {
      const answer = yield* cancel(ctx, request.id, `cancel ${n} of a refused payment`)
      yield* Http.check(
        answer.status === "refused",
        () => `cancel ${n} of a refused payment answered status ${answer.status}, expected refused`
      )
    }
    const again = yield* post(ctx, request)
    yield* Http.check(
      again.status === 422 && same(again.body, first.body),
      () => `a repeat of a refused payment after its cancel: ${Http.seen(again)}, expected 422 ${first.text}`
    )
  })

/** A reversal, merchant to payer without a fee, posts like a payment. */
export const reversal = (ctx: Context) =>
  Effect.gen(function* () {
    const request = payment(ctx, "reversal", {
      from: ctx.setup.merchant,
      to: ctx.setup.payer,
      amount: 50,
      fee: null,
      kind: "reversal"
    })
    const answer = yield* postNew(ctx, request, "POST a reversal from the merchant to the payer")
    yield* expectPosted(ctx, request, answer.posted_at, "GET the reversal")
  })
