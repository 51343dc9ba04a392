/**
 * The statement rules: `GET /transfers?posted_on=` lists every transfer the core posted on a Maldives
 * day exactly once, as posted, in pages of at most 100 ordered by `posted_at` then `id`, linked by
 * `next_cursor` to a last page whose cursor is `null`.
 */
import * as Connector from "@laari/core/wallet/Connector"
import { Effect } from "effect"
import { asked, type Context, epochMs, notChecked, payment, postNew, postedOn } from "./Context.js"
import * as Http from "./Http.js"

/** A day with more pages than this is taken for a cursor that never ends. */
const MaxPages = 1000

/** Every page of a day's statement, following `next_cursor` to the end. */
export const readDay = (ctx: Context, day: string) =>
  Effect.gen(function* () {
    const pages: Array<Connector.StatementPage> = []
    const cursors = new Set<string>()
    let cursor: string | null = null
    do {
      const path: string = `/transfers?posted_on=${day}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      const answer: Http.Answer = yield* ctx.http.call("GET", path)
      const what = `page ${pages.length + 1} of the statement of ${day}`
      const items = (answer.body as { transfers?: unknown } | undefined)?.transfers
      if (answer.status === 200 && Array.isArray(items) && items.length > Connector.StatementPageSize)
        return yield* Http.broken(
          `${what} holds ${items.length} transfers, more than ${Connector.StatementPageSize}`
        )
      const page: Connector.StatementPage = yield* Http.expect(answer, 200, Connector.StatementPage, what)
      pages.push(page)
      cursor = page.next_cursor
      if (cursor !== null) {
        if (cursors.has(cursor))
          return yield* Http.broken(`${what}: next_cursor ${cursor} was already followed (the pages loop)`)
        if (page.transfers.length === 0)
          return yield* Http.broken(`${what} is empty but has a next_cursor: only the last page may be empty`)
        cursors.add(cursor)
      }
      if (pages.length > MaxPages)
        return yield* Http.broken(`the statement of ${day} goes on past ${MaxPages} pages`)
    } while (cursor !== null)
    return pages
  })

const byDay = (ctx: Context) => {
  const days = new Map<string, Array<string>>()
  for (const [id, { postedAt }] of ctx.posted) {
    const day = postedOn(postedAt)
    days.set(day, [...(days.get(day) ?? []), id])
  }
  return days
}

/** Makes `pagingTransfers` one-laari payments, then reads their day page by page. */
export const paging = (ctx: Context) =>
  Effect.gen(function* () {
    const made = yield* Effect.forEach(
      Array.from({ length: ctx.pagingTransfers }, (_, n) => n),
      (n) =>
        postNew(
          ctx,
          payment(ctx, "statement-paging", {
            amount: 1,
            fee: n % 2 === 0 ? null : { to: ctx.setup.fee, amount: 0 }
          }),
          `POST payment ${n + 1} of ${ctx.pagingTransfers} for the statement's pages`
        ),
      { concurrency: 4 }
    )
    const days = new Map<string, number>()
    for (const answer of made)
      days.set(postedOn(answer.posted_at), (days.get(postedOn(answer.posted_at)) ?? 0) + 1)
    const day = [...days].find(([, count]) => count > Connector.StatementPageSize)?.[0]
    if (day === undefined)
      return yield* notChecked(
        `the ${ctx.pagingTransfers} payments fell on ${[...days.keys()].join(" and ")}, none with more than a page`
      )
    const pages = yield* readDay(ctx, day)
    const items = pages.flatMap((p) => p.transfers)
    yield* Http.check(
      pages.length > 1,
      () => `the statement of ${day} holds ${items.length} transfers in one page`
    )
    const seen = new Set<string>()
    for (const [n, item] of items.entries()) {
      yield* Http.check(
        !seen.has(item.id),
        () => `transfer ${item.id} is listed twice in the pages of the statement of ${day}`
      )
      seen.add(item.id)
      yield* Http.check(
        postedOn(item.posted_at) === day,
        () => `the statement of ${day} lists ${item.id} posted at ${item.posted_at}, another Maldives day`
      )
      const before = items[n - 1]
      if (before !== undefined) {
        const order = epochMs(before.posted_at) - epochMs(item.posted_at) || (before.id < item.id ? -1 : 1)
        yield* Http.check(
          order < 0,
          () =>
            `the statement of ${day} lists ${before.id} (${before.posted_at}) before ${item.id} (${item.posted_at}): not ordered by posted_at then id`
        )
      }
    }
    return `${items.length} transfers in ${pages.length} pages`
  })

/** Every transfer the run posted is in its day's statement exactly once, as posted; nothing else is. */
export const complete = (ctx: Context) =>
  Effect.gen(function* () {
    if (ctx.posted.size === 0) return yield* notChecked("the run posted nothing")
    let listed = 0
    const days = byDay(ctx)
    for (const [day, ids] of days) {
      const items = (yield* readDay(ctx, day)).flatMap((p) => p.transfers)
      const count = new Map<string, number>()
      for (const item of items) count.set(item.id, (count.get(item.id) ?? 0) + 1)
      for (const item of items) {
        const why = ctx.absent.get(item.id)
        yield* Http.check(
          why === undefined,
          () => `the statement of ${day} lists ${item.id}, which the core must never post: ${why}`
        )
      }
      for (const id of ids) {
        const { request, postedAt } = ctx.posted.get(id)!
        const times = count.get(id) ?? 0
        yield* Http.check(
          times === 1,
          () =>
            `the statement of ${day} lists transfer ${id} ${times === 0 ? "not at all" : `${times} times`}: expected once`
        )
        const item = items.find((i) => i.id === id)!
        yield* Http.check(
          asked(item) === asked(request),
          () => `the statement of ${day} lists ${id} as ${asked(item)}, but ${asked(request)} was posted`
        )
        yield* Http.check(
          epochMs(item.posted_at) === epochMs(postedAt),
          () =>
            `the statement of ${day} lists ${id} posted at ${item.posted_at}, but its POST answered ${postedAt}`
        )
        listed += 1
      }
    }
    return `${listed} transfers found, each once, in ${days.size} day${days.size === 1 ? "" : "s"}`
  })
