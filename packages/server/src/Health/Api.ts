/**
 * Liveness and readiness.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import * as Problems from "../Http/Problems.js"

const Status = Schema.Struct({ status: Schema.String })

export class HealthApi extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Status))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Status).addError(Problems.ServiceUnavailable))
  .annotate(OpenApi.Exclude, true) {}
