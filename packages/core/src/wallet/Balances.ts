/**
 * The merchant's balance, its movements and the daily settlement report, over the `LedgerReadsStore`
 * port. Read-only: money moves only through the payment and refund services.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import * as Balance from "./Balance.js"
import { InvalidRequest } from "../kernel/Errors.js"
import type { Tenant } from "../kernel/Ids.js"
import * as Money from "../kernel/Money.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { LedgerReadsStore } from "./WalletStore.js"

export class BalanceTransactionNotFound extends Schema.TaggedError<BalanceTransactionNotFound>()(
  "BalanceTransactionNotFound",
  { message: Schema.optionalWith(Schema.String, { default: () => "Balance transaction not found" }) }
) {}

/** `date` of a settlement report is not a day (`400`). */
export class InvalidReportDate extends Schema.TaggedError<InvalidReportDate>()("InvalidReportDate", {
  message: Schema.String
}) {}

/**
 * The days a settlement report can be asked for: the service holds no movement before 2000, and a
 * four-digit year ends at 9999 (`0000-01-01` is a date of the proleptic calendar, not of a ledger).
 */
export const FirstReportDay = "2000-01-01"
export const LastReportDay = "9999-12-31"

const uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
/** The ids the service gives its transfers (`Balance.classify`): a kind and a UUID, or an invoice's attempt. */
const madeId = new RegExp(`^(?:(?:mandate-charge|qr-payment|checkout|refund):)?${uuid}(?::\\d+)?$`, "i")

/**
 * A cursor as the ledger stores it: the service's ids are lower case, and a UUID is the same in any case
 * (as every id of the API is looked up), so `MANDATE-CHARGE:5E0B...` finds its movement. Any other id (an
 * operator's correction) is matched as written.
 */
export const cursorId = (id: string): string => (madeId.test(id) ? id.toLowerCase() : id)

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
    const ledger = yield* LedgerReadsStore

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
      const startingAfter = cursor.startingAfter === undefined ? undefined : cursorId(cursor.startingAfter)
      const rows = yield* ledger.movements(tenant, { startingAfter, limit: cursor.limit + 1 })
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
      if (day.date < FirstReportDay || day.date > LastReportDay)
        return yield* new InvalidReportDate({
          message: `date must be a day from ${FirstReportDay} to ${LastReportDay}`
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
