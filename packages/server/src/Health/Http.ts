/**
 * `/healthz` answers while the process runs; `/readyz` only once start-up is done (`Readiness`: the
 * migrations, the seeding) and while the database answers. Once the process is stopping neither is
 * ready: the socket no longer listens, and the edge answers `503` to any request still arriving on an
 * open connection (`Http/Edge.ts`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Errors } from "@laari/core"
import { Effect } from "effect"
import * as Operation from "../Http/Operation.js"
import { HealthApi } from "./Api.js"
import { Readiness } from "./Readiness.js"

export const HealthLive = Operation.handlers(HealthApi, (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const readiness = yield* Readiness
    const database = sql`SELECT 1`.pipe(Effect.timeout("2 seconds"))
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" }))
      .handle("readyz", () =>
        readiness.isDone.pipe(
          Effect.filterOrFail(
            (done) => done,
            () => "starting"
          ),
          Effect.zipRight(database),
          Effect.mapBoth({
            onFailure: () => new Errors.ServiceUnavailable(),
            onSuccess: () => ({ status: "ready" })
          })
        )
      )
  })
)
