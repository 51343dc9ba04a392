/**
 * The port of a ledger across the network (the wallet provider's core): `RemoteLedger`, the calls
 * (the server's wallet connector client behind a circuit breaker), beside `MovementsStore`
 * (`WalletStore.ts`), where each movement is committed pending before its call and settled after. Both are optional: without them every
 * environment moves money in the `Wallet` port inside laari's own transaction, as the built-in ledger does.
 */
import { Context, DateTime, type Duration, Effect, Option } from "effect"
import { PaymentOutcomeUnknown, type ServiceUnavailable, walletUnavailable } from "../kernel/Errors.js"
import type { CustomerId, Environment, MerchantId } from "../kernel/Ids.js"
import type { Answer, Movement, SettledBy, Settling } from "./Movement.js"
import * as Movements from "./Movement.js"
import type { MovementsStoreService } from "./WalletStore.js"

/** A payer as the core holds it. */
export interface RemotePayer {
  readonly walletId: string
  readonly timeZone: string
}

export interface RemoteLedgerService {
  /** Whether this environment's money lives in the core (`LAARI_WALLET_ENVIRONMENTS`). */
  readonly handles: (environment: Environment) => boolean
  /**
   * `false` while the circuit breaker is open (the core failed repeatedly): a new payment is then refused
   * at once, nothing committed and nothing sent. The resolver still asks, and its answers close it again.
   */
  readonly accepting: Effect.Effect<boolean>
  /** `POST /transfers` with the movement's id and body: what the core answered, `unknown` when nothing. */
  readonly send: (movement: Movement) => Effect.Effect<Answer>
  /** `GET /transfers/{id}`: what the core holds of the id, `not-taken` when it never took it. */
  readonly status: (id: string) => Effect.Effect<Answer | { readonly _tag: "not-taken" }>
  /** `POST /transfers/{id}/cancel`: a known answer is final. */
  readonly cancel: (id: string) => Effect.Effect<Answer>
  /**
   * The customer's wallet in the core (`GET /wallets/{id}`): its id there and the zone its holder's
   * months count in; `undefined` when it has none. The core, not laari, decides whether it may pay.
   */
  readonly payer: (customer: {
    readonly id: CustomerId
    readonly environment: Environment
  }) => Effect.Effect<RemotePayer | undefined, ServiceUnavailable>
  /** The core's wallet ids of a merchant, and of the service's fees. */
  readonly merchantWallet: (merchantId: MerchantId) => string
  readonly feeWallet: string
  /** `LAARI_WALLET_CANCEL_AFTER_S`: how long an outcome may stay unknown before the resolver cancels. */
  readonly cancelAfter: Duration.Duration
}

export class RemoteLedger extends Context.Tag("laari/RemoteLedger")<RemoteLedger, RemoteLedgerService>() {}

/** Both ports when the host provides them (a connector is configured), else none. */
export interface Remote {
  readonly ledger: RemoteLedgerService
  readonly movements: MovementsStoreService
}

/** The core's ports when `environment`'s money lives there, else none. */
export const remoteFor = (remote: Remote | undefined, environment: Environment): Remote | undefined =>
  remote?.ledger.handles(environment) ? remote : undefined

export const remoteOf = (
  ledger: Option.Option<RemoteLedgerService>,
  movements: Option.Option<MovementsStoreService>
): Remote | undefined =>
  Option.isSome(ledger) && Option.isSome(movements)
    ? { ledger: ledger.value, movements: movements.value }
    : undefined

/**
 * A new payment's first check, before anything is committed: with `away` (the core's ports, when the
 * environment's money lives there) and its circuit breaker open, it is refused at once, nothing committed
 * and nothing sent; the built-in ledger (`undefined`) always passes.
 */
export const guard = (
  away: { readonly ledger: Pick<RemoteLedgerService, "accepting"> } | undefined
): Effect.Effect<void, ServiceUnavailable> =>
  away === undefined
    ? Effect.void
    : Effect.flatMap(away.ledger.accepting, (accepting) =>
        accepting ? Effect.void : Effect.fail(walletUnavailable())
      )

/**
 * Settles movement `id` with `answer` once, in the caller's transaction: `first` runs with the movement
 * as it stood pending (the cause writes its settled state), `again` with the movement someone settled
 * before (the request and the resolver may both hold an answer), which answers what it came to.
 */
export const settleOnce = <A, E, R>(
  movements: MovementsStoreService,
  id: string,
  answer: Settling,
  by: SettledBy,
  first: (pending: Movement, now: DateTime.Utc) => Effect.Effect<A, E, R>,
  again: (settled: Movement) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | ServiceUnavailable, R> =>
  Effect.gen(function* () {
    const now = yield* DateTime.now
    const current = yield* movements.lock(id)
    if (current === undefined) return yield* Effect.dieMessage(`movement ${id} lost`)
    if (current.status !== "pending") return yield* again(current)
    yield* movements.update(Movements.settle(current, answer, by, now))
    return yield* first(current, now)
  })

/**
 * A committed pending movement's two steps: its call (`send`, outside any transaction), then its
 * settlement by the call's answer (`settle`, which joins the transaction it runs in, so a keyed request's
 * stored answer commits with it). A call that learnt nothing leaves the movement pending for the resolver
 * and fails with `PaymentOutcomeUnknown`.
 */
export interface Pending<A, E = never, R = never> {
  readonly send: Effect.Effect<Settling, PaymentOutcomeUnknown>
  readonly settle: (answer: Settling) => Effect.Effect<A, E, R>
}

/**
 * The two steps of `movement` in `remote`, settled by a cause's `settle` (the resolver's too), whose
 * value is the outcome: the cause's result, or its refusal. `settle` is given the movement as it was
 * committed, so a cause may announce what its settlement will lock (the resolver knows only the id).
 */
export const pending = <A, E1, E2, R>(
  remote: { readonly ledger: RemoteLedgerService } | undefined,
  movement: Movement,
  settle: (
    id: string,
    answer: Settling,
    by: SettledBy,
    committed: Movement
  ) => Effect.Effect<Effect.Effect<A, E1>, E2, R>
): Pending<A, E1 | E2, R> => ({
  send:
    remote === undefined
      ? Effect.dieMessage("no wallet connector")
      : Effect.flatMap(
          remote.ledger.send(movement),
          (answer): Effect.Effect<Settling, PaymentOutcomeUnknown> =>
            answer._tag === "unknown"
              ? Effect.fail(PaymentOutcomeUnknown.forPayment())
              : Effect.succeed(answer)
        ),
  settle: (answer) => Effect.flatten(settle(movement.id, answer, "answer", movement))
})

/** Both steps, one after the other. */
export const sendThenSettle = <A, E, R>(
  steps: Pending<A, E, R>
): Effect.Effect<A, E | PaymentOutcomeUnknown, R> => Effect.flatMap(steps.send, steps.settle)

/** The steps with their settlement passed through `f` (how the endpoint answers the outcome). */
export const answeredBy = <A, E, R, B, E2, R2>(
  steps: Pending<A, E, R>,
  f: (settlement: Effect.Effect<A, E, R>) => Effect.Effect<B, E2, R2>
): Pending<B, E2, R2> => ({ send: steps.send, settle: (answer) => f(steps.settle(answer)) })

/**
 * The tenant's movement `id`, read under its lock (so a settlement in flight is waited for): for a retry
 * of a request whose answer was unknown. Another tenant's is laari's bug (the key that names it is the
 * tenant's own), a defect.
 */
export const tenantMovement = (
  movements: MovementsStoreService,
  tenant: { readonly merchantId: string; readonly environment: Environment },
  id: string
): Effect.Effect<Movement, ServiceUnavailable> =>
  Effect.flatMap(movements.lock(id), (movement) =>
    movement === undefined ||
    movement.merchantId !== tenant.merchantId ||
    movement.environment !== tenant.environment
      ? Effect.dieMessage(`movement ${id} is not this tenant's`)
      : Effect.succeed(movement)
  )
