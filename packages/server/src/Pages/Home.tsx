/**
 * What a person finds at the server's root: a small page pointing at what there is to open (the API's
 * reference, the merchant dashboard, the sandbox wallet) instead of a JSON `404`, and the site's icon, so
 * a browser's `/favicon.ico` is not a `404` in every log.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import { Page, respond } from "./Html.js"
import * as Paths from "./Paths.js"
import { route } from "./Routing.js"

/** The brand's mark: a rounded square in the pages' blue with an "l", small enough to inline. */
export const Icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b3d91"/><path d="M13 6h5v16h4v4H13z" fill="#fff"/></svg>`

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const config = yield* ServerConfigTag
    const assets = Paths.prefixOf(config.checkoutUrl)
    const links = [
      {
        href: "/docs",
        label: "API reference",
        note: "Every endpoint, with examples; /openapi.json is the document"
      },
      {
        href: `${Paths.prefixOf(config.baseUrl)}/dashboard`,
        label: "Dashboard",
        note: "Merchants: sign in with a secret key to see mandates, payments and webhooks"
      },
      {
        href: `${assets}/wallet`,
        label: "Wallet",
        note: "Customers (the sandbox's wallet app): sign in with a phone number and a one-time code"
      }
    ]

    yield* router.get(
      route("/"),
      Effect.sync(() =>
        respond(
          <Page lang="en" title="laari" path="/" assets={assets} languages={false}>
            <div class="card">
              <h1>laari</h1>
              <p class="note">Merchant payments: mandates, QR codes, checkout and subscriptions.</p>
              <ul>
                {links.map((l) => (
                  <li key={l.href}>
                    <a href={l.href}>{l.label}</a>: {l.note}
                  </li>
                ))}
              </ul>
            </div>
          </Page>
        )
      )
    )

    yield* router.get(
      route("/favicon.ico"),
      Effect.succeed(
        HttpServerResponse.text(Icon, {
          contentType: "image/svg+xml",
          headers: {
            "cache-control": "public, max-age=31536000, immutable",
            "x-content-type-options": "nosniff"
          }
        })
      )
    )
  })
)
