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

export class HealthApi extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Status))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Status).addError(Problems.ServiceUnavailable))
  .annotate(Access.Access, Access.anyone)
  .annotate(OpenApi.Exclude, true) {}
