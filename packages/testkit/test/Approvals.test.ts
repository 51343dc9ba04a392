/**
 * One-time codes against online guessing, through the services on the memory adapters: the caps per
 * subject and per phone, the keyed hash, and the redaction of spent codes from the wallet notices.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Approval,
  Approvals,
  Checkout,
  Crypto,
  type Ids,
  Mandates,
  Notifications,
  Store,
  Wallet
} from "@laari/core"
import { Effect } from "effect"
import { ControllableClock } from "../src/ControllableClock.js"
import { Seed } from "../src/Seed.js"
import * as Testkit from "../src/Testkit.js"

const world = () => Effect.provide(Testkit.layer())

let refs = 0
let phones = 0

const liveMerchant = Effect.flatMap(Seed, (seed) =>
  seed.merchant({ name: "Fit Club", features: { mandatesLive: true, subscriptionsLive: true } })
)

const customer = (balance = 50_000) =>
  Effect.flatMap(Seed, (seed) =>
    seed.customer({ environment: "live", phone: `+960 77${String(++phones).padStart(5, "0")}`, balance })
  )

/** A live mandate awaiting approval. */
const pendingMandate = (merchant: Store.Merchant) =>
  Effect.flatMap(Mandates.Mandates, (mandates) =>
    mandates.create(
      { merchantId: merchant.id, environment: "live" },
      {
        reference: `gym-${++refs}`,
        title: "Gym membership",
        description: null,
        perChargeCap: 20_000,
        periodCap: null,
        period: null,
        expiresAt: null,
        returnUrl: null
      }
    )
  )

/** A live, open one-off checkout session. */
const openSession = (merchant: Store.Merchant) =>
  Effect.flatMap(Checkout.Checkout, (checkout) =>
    checkout.create(
      { merchantId: merchant.id, environment: "live" },
      {
        mode: null,
        reference: `order-${++refs}`,
        title: "Order",
        description: null,
        returnUrl: null,
        amount: 5_000,
        priceData: null
      }
    )
  )

/** The notice that carried the challenge's code, as the wallet app lists it. */
const noticeOf = (customerId: Ids.CustomerId, challengeId: string) =>
  Effect.map(
    Effect.flatMap(Notifications.Notifications, (n) => n.list(customerId)),
    (all) => all.find((n) => n.kind === "one_time_code" && n.data.challenge_id === challengeId)!
  )

/** Asks for a code for the mandate and reads it from the notice. */
const mandateCode = (mandateId: string, c: Store.Customer) =>
  Effect.gen(function* () {
    const challenge = yield* (yield* Mandates.Mandates).requestApproval(mandateId, c.phone)
    const code = String((yield* noticeOf(c.id, challenge.id)).data.code)
    expect(code).toMatch(/^\d{6}$/)
    return { challenge, code }
  })

const sessionCode = (sessionId: string, c: Store.Customer) =>
  Effect.gen(function* () {
    const challenge = yield* (yield* Checkout.Checkout).requestPayment(sessionId, c.phone)
    return { challenge, code: String((yield* noticeOf(c.id, challenge.id)).data.code) }
  })

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0")

/** `n` wrong guesses on the mandate with fresh codes, five per code (each code then locks). */
const guessWrong = (mandateId: string, c: Store.Customer, n: number) =>
  Effect.gen(function* () {
    const mandates = yield* Mandates.Mandates
    let left = n
    while (left > 0) {
      const { challenge, code } = yield* mandateCode(mandateId, c)
      for (let i = 0; i < Approval.MaxAttempts && left > 0; i++, left--) {
        const refused = yield* Effect.flip(mandates.approve(mandateId, challenge.id, wrong(code)))
        expect(refused._tag).toBe("ApprovalRefused")
      }
    }
  })

describe("caps on issuing codes", () => {
  it.effect("five codes per mandate an hour; the sixth waits until the first leaves the hour", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const m = yield* pendingMandate(yield* liveMerchant)
      const c = yield* customer()
      for (let i = 0; i < Approval.MaxCodesPerSubject; i++) {
        yield* mandates.requestApproval(m.id, c.phone)
        yield* clock.advance("1 minute")
      }
      const refused = yield* Effect.flip(mandates.requestApproval(m.id, c.phone))
      expect(refused).toMatchObject({
        _tag: "ApprovalLimited",
        limit: "codes",
        scope: "subject",
        retryAfterSeconds: 3600 - 5 * 60,
        message: "Too many codes were requested for this approval; try again in 55 minutes"
      })
      expect(refused).toBeInstanceOf(Approvals.ApprovalLimited)
      yield* clock.advance(`${3600 - 5 * 60 - 1} seconds`)
      expect((yield* Effect.flip(mandates.requestApproval(m.id, c.phone)))._tag).toBe("ApprovalLimited")
      yield* clock.advance("1 second")
      const { challenge, code } = yield* mandateCode(m.id, c)
      expect((yield* mandates.approve(m.id, challenge.id, code)).status).toBe("ACTIVE")
    }).pipe(world())
  )

  it.effect(
    "ten codes per phone an hour across mandates and checkout sessions; other phones are not held",
    () =>
      Effect.gen(function* () {
        const merchant = yield* liveMerchant
        const mandates = yield* Mandates.Mandates
        const checkout = yield* Checkout.Checkout
        const c = yield* customer()
        const a = yield* pendingMandate(merchant)
        const s = yield* openSession(merchant)
        for (let i = 0; i < Approval.MaxCodesPerSubject; i++) {
          yield* mandates.requestApproval(a.id, c.phone)
          yield* checkout.requestPayment(s.id, c.phone)
        }
        const third = yield* pendingMandate(merchant)
        const refused = yield* Effect.flip(mandates.requestApproval(third.id, c.phone))
        expect(refused).toMatchObject({ _tag: "ApprovalLimited", limit: "codes", scope: "customer" })
        // The refused request sent nothing.
        const sent = (yield* (yield* Notifications.Notifications).list(c.id)).filter(
          (n) => n.kind === "one_time_code"
        )
        expect(sent).toHaveLength(Approval.MaxCodesPerCustomer)
        const other = yield* customer()
        yield* mandates.requestApproval(third.id, other.phone)
      }).pipe(world())
  )
})

describe("caps on wrong guesses", () => {
  it.effect(
    "ten wrong guesses per mandate a day: then even the right code is refused and counts nothing",
    () =>
      Effect.gen(function* () {
        const mandates = yield* Mandates.Mandates
        const challenges = yield* Store.ChallengesStore
        const m = yield* pendingMandate(yield* liveMerchant)
        const c = yield* customer()
        yield* guessWrong(m.id, c, Approval.MaxWrongGuessesPerSubject)
        const { challenge, code } = yield* mandateCode(m.id, c)
        const refused = yield* Effect.flip(mandates.approve(m.id, challenge.id, code))
        expect(refused).toMatchObject({ _tag: "ApprovalLimited", limit: "guesses", scope: "subject" })
        expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBe(24 * 3600)
        expect((yield* Effect.flip(mandates.decline(m.id, challenge.id, code)))._tag).toBe("ApprovalLimited")
        expect((yield* challenges.lock(challenge.id))?.attempts).toBe(0)
        expect((yield* mandates.forApproval(m.id)).status).toBe("INITIATED")
      }).pipe(world())
  )

  it.effect("one wrong guess short of the cap, the right code still approves", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* pendingMandate(yield* liveMerchant)
      const c = yield* customer()
      yield* guessWrong(m.id, c, Approval.MaxWrongGuessesPerSubject - 1)
      const { challenge, code } = yield* mandateCode(m.id, c)
      expect((yield* mandates.approve(m.id, challenge.id, code)).status).toBe("ACTIVE")
    }).pipe(world())
  )

  it.effect("twenty wrong guesses per phone a day hold a new mandate too; another phone is not held", () =>
    Effect.gen(function* () {
      const merchant = yield* liveMerchant
      const mandates = yield* Mandates.Mandates
      const c = yield* customer()
      yield* guessWrong((yield* pendingMandate(merchant)).id, c, Approval.MaxWrongGuessesPerSubject)
      yield* guessWrong((yield* pendingMandate(merchant)).id, c, Approval.MaxWrongGuessesPerSubject)
      const m = yield* pendingMandate(merchant)
      const { challenge, code } = yield* mandateCode(m.id, c)
      expect(yield* Effect.flip(mandates.approve(m.id, challenge.id, code))).toMatchObject({
        _tag: "ApprovalLimited",
        limit: "guesses",
        scope: "customer"
      })
      const other = yield* customer()
      const theirs = yield* mandateCode(m.id, other)
      expect((yield* mandates.approve(m.id, theirs.challenge.id, theirs.code)).customerId).toBe(other.id)
    }).pipe(world())
  )

  it.effect("a checkout session: past its cap the right code pays nothing", () =>
    Effect.gen(function* () {
      const checkout = yield* Checkout.Checkout
      const wallet = yield* Wallet.Wallet
      const s = yield* openSession(yield* liveMerchant)
      const c = yield* customer()
      for (let k = 0; k < 2; k++) {
        const { challenge, code } = yield* sessionCode(s.id, c)
        for (let i = 0; i < Approval.MaxAttempts; i++)
          expect((yield* Effect.flip(checkout.pay(s.id, challenge.id, wrong(code))))._tag).toBe(
            "ApprovalRefused"
          )
      }
      const { challenge, code } = yield* sessionCode(s.id, c)
      expect(yield* Effect.flip(checkout.pay(s.id, challenge.id, code))).toMatchObject({
        _tag: "ApprovalLimited",
        scope: "subject"
      })
      expect((yield* checkout.forPayment(s.id)).status).toBe("OPEN")
      expect((yield* wallet.payer(c.id))?.balance).toBe(50_000)
    }).pipe(world())
  )
})

describe("stored codes", () => {
  it.effect("the hash is HMAC-SHA-256 under the store's key over id:code, not SHA-256 of the code", () =>
    Effect.gen(function* () {
      const crypto = yield* Crypto.Crypto
      const challenges = yield* Store.ChallengesStore
      const m = yield* pendingMandate(yield* liveMerchant)
      const { challenge, code } = yield* mandateCode(m.id, yield* customer())
      const stored = (yield* challenges.lock(challenge.id))!.codeHash
      expect(stored).not.toBe(yield* crypto.sha256(code))
      expect(stored).not.toContain(code)
      const key = yield* challenges.codeKey
      expect(key.length).toBe(32)
      expect(stored).toBe(yield* crypto.hmacSha256(key, `${challenge.id}:${code}`))
    }).pipe(world())
  )
})

describe("redaction of spent codes", () => {
  it.effect("once used, the notice keeps no code; a pending code's notice is untouched", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* pendingMandate(yield* liveMerchant)
      const c = yield* customer()
      const first = yield* mandateCode(m.id, c)
      const second = yield* mandateCode(m.id, c)
      yield* mandates.approve(m.id, second.challenge.id, second.code)
      const used = yield* noticeOf(c.id, second.challenge.id)
      expect(used.body).toBe("Your code was used.")
      expect(used.data).toEqual({
        challenge_id: second.challenge.id,
        subject_kind: "mandate",
        subject_id: m.id
      })
      expect(JSON.stringify(used)).not.toContain(second.code)
      expect((yield* noticeOf(c.id, first.challenge.id)).data.code).toBe(first.code)
      expect((yield* (yield* Store.ChallengesStore).lock(second.challenge.id))?.redactedAt).not.toBeNull()
    }).pipe(world())
  )

  it.effect("once locked by five wrong codes, and once expired (by the background job), likewise", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const checkout = yield* Checkout.Checkout
      const merchant = yield* liveMerchant
      const m = yield* pendingMandate(merchant)
      const c = yield* customer()
      const locked = yield* mandateCode(m.id, c)
      for (let i = 0; i < Approval.MaxAttempts; i++)
        yield* Effect.flip(mandates.approve(m.id, locked.challenge.id, wrong(locked.code)))
      expect((yield* noticeOf(c.id, locked.challenge.id)).body).toBe(
        "Your code was locked after too many incorrect tries."
      )
      expect((yield* noticeOf(c.id, locked.challenge.id)).data.code).toBeUndefined()

      const s = yield* openSession(merchant)
      const lapsing = yield* sessionCode(s.id, c)
      yield* clock.advance("4 minutes")
      expect((yield* noticeOf(c.id, lapsing.challenge.id)).data.code).toBe(lapsing.code)
      yield* clock.advance("1 minute")
      const expired = yield* noticeOf(c.id, lapsing.challenge.id)
      expect(expired.body).toBe("Your code expired unused.")
      expect(JSON.stringify(expired)).not.toContain(lapsing.code)
      expect((yield* Effect.flip(checkout.pay(s.id, lapsing.challenge.id, lapsing.code)))._tag).toBe(
        "ApprovalRefused"
      )
    }).pipe(world())
  )
})
