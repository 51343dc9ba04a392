/**
 * The authentication middlewares as the API declares them: what each provides, how it fails, the bearer
 * schemes. Kept apart from their implementations (`Security.ts`, over the database's directory) so the
 * API's definition, which the CLI's typed client loads, does not load the database's modules.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import type { Auth } from "@laari/core"
import { Context, Schema } from "effect"
import * as Problems from "./Problems.js"

export class CurrentPrincipal extends Context.Tag("laari/server/CurrentPrincipal")<
  CurrentPrincipal,
  Auth.Principal
>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("laari/server/Authentication", {
  provides: CurrentPrincipal,
  failure: Schema.Union(
    Problems.UnauthorizedProblem,
    Problems.ServiceUnavailable,
    Problems.RateLimitedProblem,
    // A key its endpoint's rule refuses whatever it sends (a publishable key on a secret-key endpoint).
    Problems.Forbidden
  ),
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The operator's token guards `/ops`; wrong tokens lock their address out for a while (`429`). */
export class OpsAuthentication extends HttpApiMiddleware.Tag<OpsAuthentication>()(
  "laari/server/OpsAuthentication",
  {
    failure: Schema.Union(Problems.UnauthorizedProblem, Problems.RateLimitedProblem),
    security: { opsToken: HttpApiSecurity.bearer }
  }
) {}
