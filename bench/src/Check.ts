/**
 * What makes a bench figure broken rather than slow, so a part that measures nothing fails its run
 * (and the smoke in CI, `pnpm bench:smoke`) instead of printing "0/s" or "Infinityx":
 *
 * - any number that is not finite (NaN, Infinity) or is negative;
 * - a rate, a count of requests, a time or a memory figure that is 0;
 * - a load run with a request that failed (a non-2xx answer, a refused connection), by status;
 * - an exactly-once or money check that does not hold, renewals left unpaid;
 * - a fault the service did not recover from (no 201 after it), a 500, an acknowledged charge lost.
 */

/** Keys whose figure must be above 0: rates, counts of work done, times and memory. */
const positive =
  /(persecond|^tps|^average|^requests$|^deliveries$|^events$|^paid$|^acknowledged$|ms|mib|^seconds$)$/i

/** Keys whose figure must be 0: what must never happen, however slow the run. */
const never = /^(status500|lostCharges)$/

/** The problems of one part's result, each naming where in it; empty when it holds. */
export const problems = (part: string, value: unknown): Array<string> => {
  const found: Array<string> = []
  const walk = (v: unknown, at: string, key: string) => {
    if (typeof v === "number") {
      if (!Number.isFinite(v)) found.push(`${at} is ${v}`)
      else if (v < 0) found.push(`${at} is negative (${v})`)
      else if (v === 0 && positive.test(key)) found.push(`${at} is 0`)
      else if (v !== 0 && never.test(key)) found.push(`${at} is ${v}, must be 0`)
    } else if (typeof v === "boolean") {
      if (!v && /^(exactlyOnce|moneyConserved|recovered|noChargeLost)$/.test(key))
        found.push(`${at} does not hold`)
    } else if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, `${at}[${i}]`, key)
    } else if (typeof v === "object" && v !== null) {
      const o = v as Record<string, unknown>
      // A load run (`Load.Run`): every request must have succeeded.
      if (typeof o.perSecond === "number" && typeof o.failures === "number" && o.failures > 0)
        found.push(
          `${at}: ${o.failures} of ${o.requests} requests failed, by status ${JSON.stringify(o.unexpected)}`
        )
      if (typeof o.paid === "number" && typeof o.subscriptions === "number" && o.paid !== o.subscriptions)
        found.push(`${at}: ${o.paid} of ${o.subscriptions} renewals paid`)
      for (const [k, x] of Object.entries(o)) walk(x, `${at}.${k}`, k)
    }
  }
  walk(value, part, part)
  return found
}
