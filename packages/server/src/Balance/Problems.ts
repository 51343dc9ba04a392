/**
 * The HTTP answers of the balance's errors. An endpoint lists the ones it can fail with (`addError`); an
 * error is answered by the schemas its endpoint lists.
 */
import { Balances } from "@laari/core"
import * as Problem from "../Http/Problem.js"

export const BalanceTransactionNotFound = Problem.plain(
  Balances.BalanceTransactionNotFound,
  "BalanceTransactionNotFound",
  404,
  "`starting_after` names no balance transaction of this merchant in this environment",
  "BALANCE_TRANSACTION_NOT_FOUND"
)

export const InvalidReportDate = Problem.plain(
  Balances.InvalidReportDate,
  "InvalidReportDate",
  400,
  `\`date\` is not a calendar day of the form \`YYYY-MM-DD\` from ${Balances.FirstReportDay} to ${Balances.LastReportDay}`,
  "INVALID_DATE"
)
