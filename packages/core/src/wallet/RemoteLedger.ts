/**
 * The ports of a ledger across the network (the wallet provider's core): `RemoteLedger`, the calls
 * (the server's wallet connector client behind a circuit breaker), and `MovementsStore`, where each
 * movement is committed pending before its call and settled after. Both are optional: without them every
 * environment moves money in the `Wallet` port inside laari's own transaction, as the built-in ledger does.
 */
import { Context, type DateTime, type Duration, type Effect, Option } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Claim } from "../kernel/Storage.js"
import type { CustomerId, Environment, MerchantId } from "../kernel/Ids.js"
import type { Answer, Movement } from "./Movement.js"

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

export interface MovementsRepo {
  /** Fails (a defect) when the id or the cause already has one: one movement per cause. */
  readonly insert: (movement: Movement) => Effect.Effect<void, ServiceUnavailable>
  /** The movement, locked until the transaction ends. */
  readonly lock: (id: string) => Effect.Effect<Movement | undefined, ServiceUnavailable>
  readonly update: (movement: Movement) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Up to `limit` pending movements due a look at `now`, oldest look first, locked, skipping those another
   * process holds. Call inside a transaction: the caller moves each one's next look later before it
   * commits (`Movement.postpone`), which leases it while the look takes its time.
   */
  readonly claimDue: Claim<Movement>
  /** The earliest next look of a pending movement, if any. */
  readonly nextDueAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
  /** How many movements are pending, and the oldest one's age: for `/readyz` and the metrics. */
  readonly pendingSummary: Effect.Effect<
    { readonly count: number; readonly oldest: DateTime.Utc | undefined },
    ServiceUnavailable
  >
}

export class MovementsStore extends Context.Tag("laari/Store/Movements")<MovementsStore, MovementsRepo>() {}

/** Both ports when the host provides them (a connector is configured), else none. */
export interface Remote {
  readonly ledger: RemoteLedgerService
  readonly movements: MovementsRepo
}

export const remoteOf = (
  ledger: Option.Option<RemoteLedgerService>,
  movements: Option.Option<MovementsRepo>
): Remote | undefined =>
  Option.isSome(ledger) && Option.isSome(movements)
    ? { ledger: ledger.value, movements: movements.value }
    : undefined
