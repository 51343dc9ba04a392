/**
 * The dashboard's balance section: the available balance, a day's settlement report to download (a
 * plain GET form, so it works without JavaScript and needs no CSRF token: it changes nothing), and the
 * latest movements. Every value shown is a figure or an id the service made, escaped by preact anyway.
 */
import type { Balance } from "@laari/core"
import { IdLink, sourceKind } from "./DashboardLinks.js"
import { d } from "./DashboardText.js"
import { type Frame, Table } from "./DashboardViews.js"
import { Ltr, When } from "./Html.js"
import { money, paymentType } from "./I18n.js"

export const BalanceView = (p: {
  readonly frame: Frame
  readonly available: number
  /** The Maldives day the date field starts at (today). */
  readonly today: string
  readonly latest: ReadonlyArray<Balance.Transaction>
}) => {
  const lang = p.frame.lang
  return (
    <>
      <p>
        {d(lang, "available")}: <strong>{<Ltr>{money(p.available)}</Ltr>}</strong>
      </p>
      <form method="get" action={`${p.frame.root}/balance/settlement`}>
        <label for="date">{d(lang, "reportDay")}</label>
        <input id="date" name="date" type="date" required value={p.today} dir="ltr" />
        <div class="actions">
          <button type="submit">{d(lang, "downloadReport")}</button>
        </div>
      </form>
      <h2>{d(lang, "movements")}</h2>
      <Table
        label={d(lang, "movements")}
        head={["when", "type", "id", "gross", "fee", "net"].map((w) =>
          d(lang, w as "when" | "type" | "id" | "gross" | "fee" | "net")
        )}
        rows={p.latest.map((t) => [
          <When at={t.createdAt} />,
          paymentType(lang, t.type),
          sourceKind[t.type] === undefined ? (
            <code>{t.sourceId}</code>
          ) : (
            <IdLink root={p.frame.root} kind={sourceKind[t.type]!} id={t.sourceId} />
          ),
          <Ltr>{money(t.gross)}</Ltr>,
          <Ltr>{money(t.fee)}</Ltr>,
          <Ltr>{money(t.net)}</Ltr>
        ])}
        empty={d(lang, "noMovements")}
      />
    </>
  )
}
