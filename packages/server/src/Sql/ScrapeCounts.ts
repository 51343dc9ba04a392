/**
 * What a metrics scrape counts in the database (`Observability/Metrics`): the items each background job
 * has due, and any count bounded by a statement timeout, so a scrape stays quick when the database is
 * not.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type DateTime, Duration, Effect } from "effect"
import { toDate } from "./Repository.js"

/** The counts of the database of the context, each within `timeout`. */
export const make = (timeout: Duration.Duration) =>
  Effect.map(SqlClient.SqlClient, (sql) => {
    /** `count` within `timeout`: cancelled by the database too, not only given up on here. */
    const bounded = <A, E, R>(count: Effect.Effect<A, E, R>) => {
      const limit = sql.unsafe(`SET LOCAL statement_timeout = ${Duration.toMillis(timeout)}`)
      return sql.withTransaction(Effect.zipRight(limit, count)).pipe(Effect.timeout(timeout))
    }

    /**
     * The items each background job (`Work.Job`, by name; the webhook deliveries' is `deliveriesJob`) has
     * due at `now`: the conditions of its claim query (`claimExpiring`, `claimDue`, `claimUnredacted`,
     * `Deliveries.claim`), counted, in one statement.
     */
    const due = (now: DateTime.Utc, deliveriesJob: string) => {
      const at = toDate(now)
      const count = sql<Record<string, number | string>>`SELECT
      (SELECT count(*) FROM mandates WHERE status = 'INITIATED' AND setup_expires_at <= ${at})
        + (SELECT count(*) FROM mandates WHERE status IN ('ACTIVE', 'SUSPENDED') AND expires_at <= ${at})
        AS "mandate-expiry",
      (SELECT count(*) FROM checkout_sessions WHERE status = 'OPEN' AND expires_at <= ${at})
        AS "checkout-expiry",
      (SELECT count(*) FROM subscriptions WHERE due_at <= ${at}) AS "renewals",
      (SELECT count(*) FROM challenges WHERE redacted_at IS NULL AND expires_at <= ${at})
        AS "code-redaction",
      (SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
        WHERE d.status = 'PENDING' AND d.due_at <= ${at}
          AND (d.leased_until IS NULL OR d.leased_until <= ${at})
          AND w.status = 'ENABLED' AND w.deleted_at IS NULL) AS ${sql(deliveriesJob)},
      (SELECT count(*) FROM wallet_movements WHERE status = 'pending' AND next_check_at <= ${at})
        AS "wallet-resolver"`.pipe(
        Effect.map((rows) => Object.entries(rows[0] ?? {}).map(([job, n]) => [job, Number(n)] as const))
      )
      return bounded(count)
    }

    return { bounded, due }
  })
