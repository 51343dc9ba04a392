/**
 * `/healthz` answers while the process runs; `/readyz` only while the database answers too. Once the
 * process is stopping neither is ready: the socket no longer listens, and the edge answers `503` to
 * any request still arriving on an open connection (`Http/Edge.ts`).
 */
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { message, reply, toResponse } from "../Http/Reply.js"

export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("healthz", () => Effect.succeed(toResponse(reply(200, { status: "ok" }))))
      .handle("readyz", () =>
        sql`SELECT 1`.pipe(
          Effect.timeout("2 seconds"),
          Effect.match({
            onFailure: () => toResponse(message(503, "This service is temporarily unavailable")),
            onSuccess: () => toResponse(reply(200, { status: "ready" }))
          })
        )
      )
  })
)
