/**
 * The route template a request was served under, told by the handler that served it (`Operation.group`
 * knows its endpoint's path), so that `MetricsHttp` labels and logs the request without routing it a
 * second time; a request no operation served (refused before its handler, or not an operation's) is
 * routed again there, as before.
 */

/** find-my-way's `:id` as OpenAPI's `{id}`: `/mandates/:id/charges` is `/mandates/{id}/charges`. */
export const template = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

const served = new WeakMap<object, string>()

/** `request` (the `HttpServerRequest`) is served under the route `path` (the router's, with `:id`). */
export const set = (request: object, templated: string): void => {
  served.set(request, templated)
}

/** The template `set` for `request`, if any. */
export const get = (request: object): string | undefined => served.get(request)
