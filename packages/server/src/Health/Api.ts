/**
 * Liveness and readiness.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"

const Status = Schema.Struct({ status: Schema.String })

export class HealthApi extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Status))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Status).addError(Doc.Unavailable))
  .annotate(OpenApi.Exclude, true) {}
