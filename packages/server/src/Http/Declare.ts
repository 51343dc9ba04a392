/**
 * What the declarations of the API's groups share, said once: what makes a group a merchant's (the key,
 * the refusals every keyed operation can answer with, its access rule and the sentence each endpoint's
 * description ends with), and what makes one the operator's.
 */
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Access from "./Access.js"
import { Authentication, OpsAuthentication } from "./Authentication.js"
import * as Problems from "./Problems.js"

/**
 * A group of the merchant API: a merchant's key (`Authentication`), refused with `403` without its scope,
 * `422` for input that does not decode and `503` while the database is away; `access` is its rule
 * (`Access`), which each endpoint's description then states (`Access.documented`).
 */
export const merchant =
  (options: { readonly access: Access.Rule; readonly title: string; readonly description: string }) =>
  <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(
    group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R>
  ) =>
    Access.documented(
      group
        .addError(Problems.Forbidden)
        .addError(Problems.InvalidRequest)
        .addError(Problems.ServiceUnavailable)
        .middleware(Authentication)
        .annotate(Access.Access, options.access)
        .annotateContext(OpenApi.annotations({ title: options.title, description: options.description }))
    )

/**
 * A group of the operator API: the operator's token (`OpsAuthentication`), `422` for input that does not
 * decode and `503` while the database is away; in the operator's document (`/ops/openapi.json`), left out
 * of the merchant API's.
 */
export const operator =
  (options: { readonly title: string }) =>
  <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(
    group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R>
  ) =>
    group
      .addError(Problems.InvalidRequest)
      .addError(Problems.ServiceUnavailable)
      .middleware(OpsAuthentication)
      .annotate(Access.Access, Access.operator)
      .annotate(OpenApi.Title, options.title)
      .annotate(OpenApi.Exclude, true)
