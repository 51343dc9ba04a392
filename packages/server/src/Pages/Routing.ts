/**
 * What every page module shares about answering: routes under a prefix, the redirect after a post, and
 * what a person may be told about a refusal.
 */
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Approvals, Errors } from "@laari/core"
import { type Lang, t } from "./I18n.js"

/** A page's route under a prefix (which may be empty). */
export const route = (path: string) => path as HttpRouter.PathInput

/** Post, redirect, get: a reload shows the page again instead of posting twice. */
export const redirect = (location: string) => HttpServerResponse.empty({ status: 303, headers: { location } })

/**
 * A refusal as a page shows it: the domain's message and the status it is answered with; the service's
 * own conditions in the page's language.
 */
export const problemOf = (
  e: unknown,
  lang: Lang = "en"
): { readonly status: number; readonly text: string } => {
  if (e instanceof Approvals.ApprovalLimited) return { status: 429, text: e.message }
  // Sent to the wallet provider's core, no answer yet: paying again could pay twice.
  if (e instanceof Errors.PaymentOutcomeUnknown) return { status: 503, text: t(lang, "beingConfirmed") }
  if (e instanceof Errors.ServiceUnavailable) return { status: 503, text: t(lang, "serviceBusy") }
  if (e instanceof Errors.InvalidRequest)
    return { status: 422, text: e.errors.map((f) => `${f.field} ${f.message}`).join("; ") }
  if (typeof e === "object" && e !== null && "message" in e && typeof e.message === "string")
    return { status: 422, text: e.message }
  return { status: 422, text: "That did not work." }
}
