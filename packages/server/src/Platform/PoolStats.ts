/**
 * How busy the database's connections are: the port through which `/metrics` and the stall log read it
 * without naming the database in use (the pool's counts on PostgreSQL, `Sql/Pg/PgPool`; PGlite's one
 * session, `Sql/Database`).
 */
import { Context } from "effect"

export interface PoolCounts {
  /** Connections open. */
  readonly total: number
  /** Open and free; unknown for PGlite. */
  readonly idle: number | undefined
  /** Statements waiting for a free connection; unknown for PGlite. */
  readonly waiting: number | undefined
}

export class PoolStats extends Context.Tag("laari/server/PoolStats")<
  PoolStats,
  { readonly counts: () => PoolCounts }
>() {}
