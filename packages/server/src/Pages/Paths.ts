/**
 * Where the hosted pages live: the customer's under the path of `LAARI_CHECKOUT_URL`
 * (`https://pay.example/laari` serves `/laari/mandate/<id>`), the dashboard at `{base_url}/dashboard`,
 * beside the API on the same server.
 */

export const prefixOf = (url: string): string => new URL(url).pathname.replace(/\/+$/, "")

/**
 * Whether `pathname` is one of the pages' forms (which post `application/x-www-form-urlencoded`): the
 * customer's under `checkoutUrl`, the dashboard's and the operator console's under `baseUrl`.
 */
export const isPage =
  (urls: { readonly checkoutUrl: string; readonly baseUrl: string }) =>
  (pathname: string): boolean => {
    const base = prefixOf(urls.baseUrl)
    for (const signedIn of [`${base}/dashboard`, `${base}/ops/console`])
      if (pathname === signedIn || pathname.startsWith(`${signedIn}/`)) return true
    const customer = prefixOf(urls.checkoutUrl)
    if (!pathname.startsWith(`${customer}/`)) return false
    const rest = pathname.slice(customer.length)
    const flow =
      /^\/(mandate|checkout)\/[^/]+\/(code|answer|pay)$/.test(rest) && !rest.startsWith("/checkout/sessions/")
    return flow || /^\/wallet\/[a-z0-9/-]+$/.test(rest)
  }
