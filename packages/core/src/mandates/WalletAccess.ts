/**
 * Signing in to the wallet app: a one-time code sent to the wallet of a phone number, the same codes
 * (caps, lifetimes, keyed hashes) as approvals, its subject the customer's wallet itself.
 */
import { Effect, Either } from "effect"
import * as Phone from "../kernel/Phone.js"
import { Approvals } from "../approvals/Approvals.js"
import type { ChallengeId, Environment } from "../kernel/Ids.js"
import { CustomerNotFound } from "./Mandates.js"
import { CustomersStore } from "../directory/MerchantsStore.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { Transactor } from "../kernel/Transactor.js"

export class WalletAccess extends Effect.Service<WalletAccess>()("laari/WalletAccess", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const customers = yield* CustomersStore
    const approvals = yield* Approvals

    const customerOf = (environment: Environment, phone: string) =>
      Effect.flatMap(customers.findByPhone(environment, Phone.lookupKey(phone)), (c) =>
        c === undefined ? Effect.fail(new CustomerNotFound()) : Effect.succeed(c)
      )

    /** Sends a sign-in code to the wallet registered to `phone`. */
    const requestSignIn = Telemetry.fn("WalletAccess.requestSignIn")(function* (
      environment: Environment,
      phone: string
    ) {
      const customer = yield* customerOf(environment, phone)
      return yield* approvals.issue(
        { kind: "wallet", id: customer.id },
        customer,
        "signing in to your wallet app"
      )
    }, tx.withTransaction)

    /**
     * The customer, once the code matches. A wrong guess is counted (the transaction commits) before the
     * refusal is returned.
     */
    const signIn = Telemetry.fn("WalletAccess.signIn")(function* (
      environment: Environment,
      phone: string,
      challengeId: ChallengeId,
      code: string
    ) {
      const outcome = yield* tx.withTransaction(
        Effect.gen(function* () {
          const customer = yield* customerOf(environment, phone)
          const verified = yield* approvals.verify({ kind: "wallet", id: customer.id }, challengeId, code)
          return Either.map(verified, () => customer)
        })
      )
      return yield* outcome
    })

    return { requestSignIn, signIn } as const
  })
}) {}
