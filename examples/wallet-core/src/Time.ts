/**
 * The core's clock in the protocol's terms: `posted_at` is Maldives time (+05:00) to the whole second,
 * and a statement's day is the Maldives day. The Maldives keeps no daylight saving, so a fixed offset is
 * exact and needs no time zone database.
 */

const offsetMs = 5 * 60 * 60 * 1000

/** Now, to the whole second: what a posted transfer records, so its `posted_at` is exactly what is stored. */
export const now = (): Date => new Date(Math.floor(Date.now() / 1000) * 1000)

/** `2026-12-02T14:05:09+05:00`. */
export const format = (date: Date): string =>
  `${new Date(date.getTime() + offsetMs).toISOString().slice(0, 19)}+05:00`

/** The instants of a Maldives day `YYYY-MM-DD`: from its midnight, up to the next one. */
export const day = (postedOn: string): { readonly start: Date; readonly end: Date } => {
  const start = new Date(`${postedOn}T00:00:00+05:00`)
  return { start, end: new Date(start.getTime() + 24 * 60 * 60 * 1000) }
}
