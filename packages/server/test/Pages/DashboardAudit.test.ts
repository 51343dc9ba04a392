/**
 * The dashboard's audit page without a browser: the filters a query string asks for (days in Maldives
 * time, the last one included; a malformed one refused), the links that keep them, and the rows as
 * rendered: every UUID is a link to its object's page, or, with no page, shown short.
 */
import type { AuditEvent } from "@laari/core"
import { DateTime } from "effect"
import { h } from "preact"
import { render } from "preact-render-to-string"
import { describe, expect, it } from "vitest"
import * as Page from "../../src/Pages/DashboardAudit.js"

const params = (q: string) => new URLSearchParams(q)

const id = (n: number) => `${String(n).padStart(8, "0")}-1111-4222-8333-${String(n).padStart(12, "0")}`

const event = (over: Partial<AuditEvent.Event>): AuditEvent.Event => ({
  id: id(99),
  chain: `merchant:${id(98)}`,
  seq: 1,
  prevHash: "0".repeat(64),
  hash: "b".repeat(64),
  merchantId: id(98),
  environment: "test",
  actor: { kind: "api_key", id: id(1) },
  action: "mandate.create",
  resourceType: "mandate",
  resourceId: id(2),
  summary: {},
  address: "127.0.0.1",
  userAgent: null,
  requestId: null,
  at: DateTime.unsafeMake("2026-12-07T10:00:00Z"),
  ...over
})

const frame = { lang: "en" as const, root: "/dashboard", assets: "", csrf: "t" }

const html = (rows: ReadonlyArray<AuditEvent.Event>, q = "", more = false) =>
  render(h(Page.AuditView, { frame, filters: Page.filtersOf(params(q)), rows, more }))

/** Every UUID in the HTML's text, outside a link's attributes and text. */
const unlinked = (markup: string) =>
  markup
    .replace(/<a [^>]*>.*?<\/a>/gs, "")
    .match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g) ?? []

describe("DashboardAudit", () => {
  it("reads each filter, days as the Maldives days from the first to the last included", () => {
    const f = Page.filtersOf(
      params(
        "actor_kind=api_key&actor_id=+k1+&action=refund.create&resource_type=refund&resource_id=r1&from=2026-12-01&to=2026-12-07"
      )
    )
    expect(f.error).toBeUndefined()
    expect(f.query.actorKind).toBe("api_key")
    expect(f.query.actorId).toBe("k1")
    expect(f.query.action).toBe("refund.create")
    expect(f.query.resourceType).toBe("refund")
    expect(f.query.resourceId).toBe("r1")
    expect(DateTime.formatIso(f.query.from!)).toBe("2026-11-30T19:00:00.000Z")
    expect(DateTime.formatIso(f.query.to!)).toBe("2026-12-07T19:00:00.000Z")
    expect(f.typed.actor_id).toBe("k1")
  })

  it("leaves out what is empty, and pages only after a row's id", () => {
    const f = Page.filtersOf(params("actor_kind=&action=&from=&starting_after=nope"))
    expect(f.error).toBeUndefined()
    expect(Object.values(f.query).every((v) => v === undefined)).toBe(true)
    expect(f.after).toBeUndefined()
    expect(Page.filtersOf(params(`starting_after=${id(5).toUpperCase()}`)).after).toBe(id(5))
    // An id is matched in the lower case the service writes; other text as typed.
    const upper = Page.filtersOf(params(`actor_id=${id(6).toUpperCase()}&resource_id=${id(7).toUpperCase()}`))
    expect([upper.query.actorId, upper.query.resourceId]).toEqual([id(6), id(7)])
    expect(Page.filtersOf(params("actor_id=LAARI_OPS_TOKEN")).query.actorId).toBe("LAARI_OPS_TOKEN")
  })

  it("refuses an actor not in the list, a day that is not one, and a filter past 255 characters", () => {
    expect(Page.filtersOf(params("actor_kind=robot")).error).toBe("badActor")
    expect(Page.filtersOf(params("from=2026-02-30")).error).toBe("badDay")
    expect(Page.filtersOf(params("to=yesterday")).error).toBe("badDay")
    expect(Page.filtersOf(params(`action=${"a".repeat(256)}`)).error).toBe("badFilter")
    expect(Page.filtersOf(params(`action=${"a".repeat(255)}`)).error).toBeUndefined()
  })

  it("keeps the filters in its links, the empty ones left out", () => {
    const typed = Page.filtersOf(params("action=refund.create&from=2026-12-01")).typed
    expect(Page.hrefOf("/dashboard/audit", typed)).toBe(
      "/dashboard/audit?action=refund.create&from=2026-12-01"
    )
    expect(Page.hrefOf("/dashboard/audit", typed, { starting_after: "x" })).toBe(
      "/dashboard/audit?action=refund.create&from=2026-12-01&starting_after=x"
    )
    expect(Page.hrefOf("/dashboard/audit", {})).toBe("/dashboard/audit")
  })

  it("links every id with a page to it, and shows the others short", () => {
    const rows = [
      event({ summary: { title: "Tea", per_charge_cap: 500 } }),
      event({
        action: "refund.create",
        resourceType: "refund",
        resourceId: id(3),
        summary: { amount: 700, payment_kind: "charge", payment_id: id(4), note: `about ${id(11)}` }
      }),
      event({
        action: "qr_code.create",
        resourceType: "qr_code",
        resourceId: id(5),
        summary: { outletId: id(12) }
      }),
      event({ action: "subscription.cancel", resourceType: "subscription", resourceId: id(6) }),
      event({ action: "webhook_endpoint.create", resourceType: "webhook_endpoint", resourceId: id(7) }),
      event({ action: "api_key.revoke", resourceType: "api_key", resourceId: id(8), environment: null }),
      event({ action: "oauth_client.revoke", resourceType: "oauth_client", resourceId: id(9) }),
      event({ action: "merchant.update", resourceType: "merchant", resourceId: id(98), environment: null }),
      event({ actor: { kind: "oauth_client", id: id(10) }, action: "thing.do", resourceType: "thing" }),
      event({ actor: { kind: "user", id: id(13) } }),
      event({ actor: { kind: "ops_token", id: "LAARI_OPS_TOKEN" }, resourceId: null }),
      event({ actor: { kind: "cli", id: "laari-cli" }, address: `::ffff:${id(14)}` })
    ]
    const markup = html(rows)
    expect(unlinked(markup)).toEqual([])
    for (const [path, n] of [
      ["mandates", 2],
      ["refunds", 3],
      ["charges", 4],
      ["qr-codes", 5],
      ["subscriptions", 6],
      ["webhooks", 7]
    ] as const)
      expect(markup).toContain(`href="/dashboard/${path}/${id(n)}"`)
    // With no page: short, leading to the rows of that actor or resource.
    expect(markup).toContain(`href="/dashboard/audit?actor_kind=api_key&amp;actor_id=${id(1)}"`)
    expect(markup).toContain(`API key <code>${id(1).slice(0, 8)}…</code>`)
    expect(markup).toContain(`href="/dashboard/audit?resource_type=api_key&amp;resource_id=${id(8)}"`)
    expect(markup).toContain(`OAuth client <code>${id(9).slice(0, 8)}…</code>`)
    expect(markup).toContain(`Team member <code>${id(13).slice(0, 8)}…</code>`)
    expect(markup).toContain(`about ${id(11).slice(0, 8)}…`)
    expect(markup).toContain(">laari operations</a>")
    expect(markup).toContain("Your business")
    // A type the dashboard has no word for is shown as the log spells it.
    expect(markup).toContain("<code>thing</code>")
    expect(markup).not.toContain(id(98))
  })

  it("pages: older rows after the last one shown, keeping the filters; the newest again", () => {
    const rows = [event({ id: id(20) }), event({ id: id(21) })]
    expect(html(rows, "action=mandate.create")).not.toContain("Older")
    const first = html(rows, "action=mandate.create", true)
    expect(first).toContain(`href="/dashboard/audit?action=mandate.create&amp;starting_after=${id(21)}"`)
    expect(first).not.toContain("Newest")
    const later = html(rows, `action=mandate.create&starting_after=${id(19)}`, true)
    expect(later).toContain('href="/dashboard/audit?action=mandate.create">Newest</a>')
    expect(html([], "")).toContain("No changes recorded.")
    // The export asks for the rows the page shows.
    const exported = html([], "action=x&from=2026-12-01")
    expect(exported).toContain('action="/dashboard/audit/export"')
    expect(exported).toContain('<input type="hidden" name="action" value="x"/>')
    expect(exported).toContain('<input type="hidden" name="from" value="2026-12-01"/>')
    expect(exported).not.toContain('type="hidden" name="to"')
  })
})
