/**
 * `/healthz` answers while the process runs; `/readyz` only once start-up is done (`Readiness`: the
 * migrations, the seeding) and while the database answers. Once the process is stopping neither is
 * ready: the socket no longer listens, and the edge answers `503` to any request still arriving on an
 * open connection (`Http/Edge.ts`).
 */
import { Errors, Store } from "@laari/core"
import { DateTime, Effect, Option } from "effect"
import * as WalletLedger from "../WalletConnector/Ledger.js"
import * as Operation from "../Http/Operation.js"
import * as Database from "../Sql/Database.js"
import { HealthApi } from "./Api.js"
import { Readiness } from "./Readiness.js"

export const HealthLive = Operation.handlers(HealthApi, (handlers) =>
  Effect.gen(function* () {
    const readiness = yield* Readiness
    const database = (yield* Database.probe).pipe(Effect.timeout("2 seconds"))
    const connector = yield* Effect.serviceOption(WalletLedger.ConnectorState)
    const movements = yield* Effect.serviceOption(Store.MovementsStore)
    // The core's circuit and what waits on it; bounded like the database's answer, absent when it is off.
    const wallet =
      Option.isNone(connector) || Option.isNone(movements)
        ? Effect.succeed({})
        : Effect.map(
            Effect.zip(movements.value.pendingSummary.pipe(Effect.timeout("2 seconds")), DateTime.now),
            ([pending, now]) => ({
              wallet_connector: {
                circuit: connector.value.breaker.isOpen() ? ("open" as const) : ("closed" as const),
                pending_movements: pending.count,
                oldest_pending_seconds:
                  pending.oldest === undefined
                    ? null
                    : Math.max(0, Math.floor(DateTime.distance(pending.oldest, now) / 1000))
              }
            })
          )
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" }))
      .handle("readyz", () =>
        readiness.isDone.pipe(
          Effect.filterOrFail(
            (done) => done,
            () => "starting"
          ),
          Effect.zipRight(database),
          Effect.zipRight(wallet),
          Effect.mapBoth({
            onFailure: () => new Errors.ServiceUnavailable(),
            onSuccess: (extra) => ({ status: "ready", ...extra })
          })
        )
      )
  })
)
