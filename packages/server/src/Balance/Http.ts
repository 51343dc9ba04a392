/**
 * Handlers of the balance endpoints: the `Balances` service, its reads as camelCase JSON in Maldives
 * time, and the settlement report as a CSV attachment.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Auth, Balance, Balances, Calendar, type Ids, Money } from "@laari/core"
import { Effect } from "effect"
import * as Operation from "../Http/Operation.js"
import {
  BalanceApi,
  type BalanceRead,
  type BalanceTransactionList,
  type BalanceTransactionRead
} from "./Api.js"

export const transactionJson = (t: Balance.Transaction): typeof BalanceTransactionRead.Type => ({
  id: t.id,
  type: t.type,
  gross: t.gross,
  fee: t.fee,
  net: t.net,
  currency: Money.Currency,
  sourceId: t.sourceId,
  createdAt: Calendar.formatMaldives(t.createdAt)
})

export const balanceJson = (
  b: Balances.BalanceNow,
  environment: Ids.Environment
): typeof BalanceRead.Type => ({
  available: b.available,
  currency: b.currency,
  environment,
  asOf: Calendar.formatMaldives(b.asOf)
})

/** A page of movements, as `GET /balance-transactions` (and GraphQL's `balanceTransactions`) reads it. */
export const pageJson = (page: Balances.Page): typeof BalanceTransactionList.Type => ({
  data: page.data.map(transactionJson),
  hasMore: page.hasMore
})

/** The report's file name: whose, which environment and which day (the date is checked by then). */
export const reportFileName = (s: Balance.Settlement): string =>
  `settlement-${s.tenant.environment}-${s.day.date}.csv`

export const BalanceLive = Operation.handlers(BalanceApi, (handlers) =>
  Effect.gen(function* () {
    const balances = yield* Balances.Balances
    return handlers
      .handle("get", () =>
        Effect.flatMap(Operation.principal, (principal) =>
          Effect.map(balances.get(Auth.tenantOf(principal)), (b) => balanceJson(b, principal.environment))
        )
      )
      .handle("transactions", ({ urlParams }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) =>
            balances.list(tenant, { startingAfter: urlParams.starting_after, limit: urlParams.limit ?? 25 })
          ),
          Effect.map(pageJson)
        )
      )
      .handle("settlement", ({ urlParams }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) => balances.settlement(tenant, urlParams.date)),
          Effect.map((s) =>
            HttpServerResponse.text(Balance.csv(s), {
              contentType: "text/csv; charset=utf-8",
              headers: {
                "content-disposition": `attachment; filename="${reportFileName(s)}"`,
                "cache-control": "no-store"
              }
            })
          )
        )
      )
  })
)
