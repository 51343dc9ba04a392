/**
 * The merchant's balance, its movements and the daily settlement report, over the `Balance.LedgerReads`
 * port. Read-only: money moves only through the payment and refund services.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import * as Balance from "./Balance.js"
import { InvalidRequest } from "../kernel/Errors.js"
import type { Tenant } from "../kernel/Ids.js"
import * as Money from "../kernel/Money.js"
import * as Telemetry from "../kernel/Telemetry.js"

export class BalanceTransactionNotFound extends Schema.TaggedError<BalanceTransactionNotFound>()(
  "BalanceTransactionNotFound",
  { message: Schema.optionalWith(Schema.String, { default: () => "Balance transaction not found" }) }
) {}

/** `date` of a settlement report is not a day (`400`). */
export class InvalidReportDate extends Schema.TaggedError<InvalidReportDate>()("InvalidReportDate", {
  message: Schema.String
}) {}

export interface BalanceNow {
  readonly available: number
  readonly currency: typeof Money.Currency
  readonly asOf: DateTime.Utc
}

export interface Page {
  readonly data: ReadonlyArray<Balance.Transaction>
  readonly hasMore: boolean
}

export class Balances extends Effect.Service<Balances>()("laari/Balances", {
  effect: Effect.gen(function* () {
    const ledger = yield* Balance.LedgerReads

    /** The tenant's available balance now. */
    const get = Telemetry.fn("Balances.get")(function* (tenant: Tenant) {
      const asOf = yield* DateTime.now
      const available = yield* ledger.available(tenant)
      return { available, currency: Money.Currency, asOf } satisfies BalanceNow
    }, Telemetry.withTenant)

    /**
     * Newest first, `limit` (1 to 100) at a time after the `startingAfter` movement; `hasMore` when older
     * ones remain. A cursor that is not one of the tenant's movements is `BalanceTransactionNotFound`.
     */
    const list = Telemetry.fn("Balances.list")(function* (tenant: Tenant, cursor: Balance.Cursor) {
      if (!Number.isInteger(cursor.limit) || cursor.limit < 1 || cursor.limit > 100)
        return yield* InvalidRequest.field("limit", "must be a whole number from 1 to 100")
      // One more than asked tells whether there is more.
      const rows = yield* ledger.movements(tenant, { ...cursor, limit: cursor.limit + 1 })
      if (rows === undefined) return yield* new BalanceTransactionNotFound()
      return {
        data: rows.slice(0, cursor.limit).map(Balance.transaction),
        hasMore: rows.length > cursor.limit
      } satisfies Page
    }, Telemetry.withTenant)

    /** The Maldives day `date`'s movements, oldest first, with their totals. */
    const settlement = Telemetry.fn("Balances.settlement")(function* (tenant: Tenant, date: string) {
      const day = yield* Either.match(Balance.day(date), {
        onLeft: (message) => Effect.fail(new InvalidReportDate({ message })),
        onRight: Effect.succeed
      })
      const transactions = (yield* ledger.between(tenant, day.from, day.to)).map(Balance.transaction)
      return {
        tenant,
        day,
        transactions,
        totals: Balance.totals(transactions)
      } satisfies Balance.Settlement
    }, Telemetry.withTenant)

    return { get, list, settlement } as const
  })
}) {}
