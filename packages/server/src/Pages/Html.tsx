/**
 * How a hosted page is answered: components rendered to HTML by `preact-render-to-string` (which escapes
 * every text and attribute, so merchant-supplied titles can never become markup), inside one layout,
 * with the headers a payments page needs: a strict Content-Security-Policy with no third-party origin,
 * no framing (`frame-ancestors 'none'` and `X-Frame-Options`), no referrer (URLs carry ids), no caching.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Calendar } from "@laari/core"
import type { DateTime } from "effect"
import type { ComponentChildren, VNode } from "preact"
import { render } from "preact-render-to-string"
import { dir, type Lang, langs, t } from "./I18n.js"

export const ContentSecurityPolicy = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'"
].join("; ")

export const securityHeaders = {
  "content-security-policy": ContentSecurityPolicy,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
} as const

export interface PageProps {
  readonly lang: Lang
  readonly title: string
  /** The page's own path, for the language links. */
  readonly path: string
  readonly testMode?: boolean
  /** Where `/assets` is served (the pages' prefix). */
  readonly assets: string
  /** The dashboard is in English only: no language links. */
  readonly languages?: boolean
  /** Tables want more room than forms. */
  readonly wide?: boolean
  readonly children: ComponentChildren
}

export const Page = (p: PageProps) => (
  <html lang={p.lang} dir={dir(p.lang)}>
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>{`${p.title} · laari`}</title>
      <link rel="stylesheet" href={`${p.assets}/assets/pages.css`} />
    </head>
    <body>
      {p.testMode ? (
        <div class="banner" role="status">
          {t(p.lang, "testMode")}
        </div>
      ) : null}
      <header class="bar">
        <span class="brand">laari</span>
        {p.languages === false ? null : (
          <nav class="langs" aria-label={t(p.lang, "language")}>
            {langs.map((l) =>
              l === p.lang ? (
                <span key={l} lang={l} aria-current="true">
                  {t(l, "langName")}
                </span>
              ) : (
                <a key={l} lang={l} href={`${p.path}?lang=${l}`}>
                  {t(l, "langName")}
                </a>
              )
            )}
          </nav>
        )}
      </header>
      <main class={p.wide ? "wide" : undefined}>{p.children}</main>
    </body>
  </html>
)

/** A rendered page with the security headers (and any cookies set on `response` later). */
export const respond = (page: VNode, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(`<!doctype html>${render(page)}`, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: securityHeaders
  })

/** A page's notice and problem, announced to screen readers. */
export const Messages = (p: {
  readonly error?: string | undefined
  /** Text, or text with isolated values (`I18n.tn`). */
  readonly notice?: ComponentChildren | undefined
}) => (
  <>
    {p.notice === undefined ? null : (
      <p class="notice" role="status">
        {p.notice}
      </p>
    )}
    {p.error === undefined ? null : (
      <p class="error" role="alert">
        {p.error}
      </p>
    )}
  </>
)

/** The CSRF token of a form (`Request`). */
export const Csrf = (p: { readonly token: string }) => <input type="hidden" name="_csrf" value={p.token} />

/** Text a merchant or customer wrote: shown as given, its direction the text's own; nothing for none. */
export const Given = (p: { readonly text: string | null }) =>
  p.text === null ? null : <span dir="auto">{p.text}</span>

/** A moment as people read it: `2026-12-31 23:59` in Maldives time; empty for none. */
export const when = (t: DateTime.Utc | null): string =>
  t === null ? "" : Calendar.formatMaldives(t).slice(0, 16).replace("T", " ")

/**
 * Numbers, amounts, dates, phone numbers and codes: always left to right, isolated from the text around
 * them, and never broken across lines. In a Dhivehi (right-to-left) sentence, "MVR 1,500.00" or
 * "2026-12-02 10:54" would otherwise be reordered by the bidirectional algorithm ("02-12-2026").
 */
export const Ltr = (p: { readonly children: ComponentChildren }) => (
  <bdi dir="ltr" class="ltr">
    {p.children}
  </bdi>
)

/** `when`, isolated; nothing for none. */
export const When = (p: { readonly at: DateTime.Utc | null }) =>
  p.at === null ? null : <Ltr>{when(p.at)}</Ltr>
