/**
 * Liveness and readiness.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import * as Access from "../Http/Access.js"
import * as Problems from "../Http/Problems.js"

const Status = Schema.Struct({ status: Schema.String })

/**
 * `/readyz` with the wallet provider's core configured says how it is doing: `open` while new payments
 * are refused at once (the core failed repeatedly), and how many movements wait for their outcome. The
 * service stays ready: the core's outage is not this process's, and taking it out of a load balancer would
 * stop the resolver's answers and the reads, not bring the core back.
 */
const Ready = Schema.Struct({
  status: Schema.String,
  wallet_connector: Schema.optional(
    Schema.Struct({
      circuit: Schema.Literal("closed", "open"),
      pending_movements: Schema.Number,
      oldest_pending_seconds: Schema.NullOr(Schema.Number)
    })
  )
})

export class HealthApi extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Status))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Ready).addError(Problems.ServiceUnavailable))
  .annotate(Access.Access, Access.anyone)
  .annotate(OpenApi.Exclude, true) {}
