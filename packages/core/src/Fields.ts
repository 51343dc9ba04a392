/**
 * The text fields merchants send: one definition of each limit (spec 8), used by the domain's validators
 * and by the server's request schemas, so the published OpenAPI document shows the same rules.
 */
import { Schema } from "effect"

/** A UTF-16 surrogate without its pair: not a character, and stored as U+FFFD it would collide. */
const loneSurrogate = /[\uD800-\uDFFF]/u

/**
 * Any text a merchant sends: well-formed Unicode without a NUL character, which PostgreSQL cannot store
 * (so a NUL or a lone surrogate is refused naming the field, never a failed statement or an altered value).
 */
export const Text = Schema.String.pipe(
  Schema.filter((s) => !s.includes("\u0000"), {
    message: () => "must not contain NUL characters",
    jsonSchema: {}
  }),
  Schema.filter((s) => !loneSurrogate.test(s), {
    message: () => "must be well-formed Unicode (it contains an unpaired surrogate)",
    jsonSchema: {}
  })
)

/** `reference`, `title` and `description` of mandates, QR codes and checkout sessions. */
export const MaxTextLength = 255

/** `Text` of at most `max` characters; the message names the rule, the wire path names the field. */
export const limited = (max: number, title: string, description: string) =>
  Text.pipe(
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` }),
    Schema.annotations({ title, description: `${description}; at most ${max} characters` })
  )

export const Reference = limited(MaxTextLength, "Reference", "The merchant's own identifier")
export const Title = limited(MaxTextLength, "Title", "Shown to the customer")
export const Description = limited(MaxTextLength, "Description", "Shown to the customer")
