/**
 * Where the hosted pages live: under the path of `LAARI_CHECKOUT_URL` (`https://pay.example/laari`
 * serves `/laari/mandate/<id>`), beside the API on the same server.
 */

export const prefixOf = (checkoutUrl: string): string => new URL(checkoutUrl).pathname.replace(/\/+$/, "")

/** Whether `pathname` is one of the pages' forms (which post `application/x-www-form-urlencoded`). */
export const isPage =
  (checkoutUrl: string) =>
  (pathname: string): boolean => {
    const prefix = prefixOf(checkoutUrl)
    if (!pathname.startsWith(`${prefix}/`)) return false
    const rest = pathname.slice(prefix.length)
    const flow =
      /^\/(mandate|checkout)\/[^/]+\/(code|answer|pay)$/.test(rest) && !rest.startsWith("/checkout/sessions/")
    return flow || /^\/wallet\/[a-z0-9/-]+$/.test(rest)
  }
