/**
 * The text fields merchants send: one definition of each limit (spec 8), used by the domain's validators
 * and by the server's request schemas, so the published OpenAPI document shows the same rules.
 */
import { Either, ParseResult, Schema } from "effect"

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

/** A text that must say something: not empty, not only spaces. */
export const nonBlank = <S extends Schema.Schema<string, string>>(schema: S) =>
  schema.pipe(
    Schema.filter((s) => s.trim().length > 0, {
      message: () => "must not be empty",
      jsonSchema: { pattern: "\\S" }
    })
  )

export const Reference = nonBlank(limited(MaxTextLength, "Reference", "The merchant's own identifier"))
export const Title = nonBlank(limited(MaxTextLength, "Title", "Shown to the customer"))
export const Description = limited(MaxTextLength, "Description", "Shown to the customer")
/** A merchant's own note on something the customer never sees (a webhook endpoint). */
export const Note = limited(
  MaxTextLength,
  "Description",
  "For the merchant's own reference, never shown to customers"
)

/** Where the customer is sent after a hosted page: an absolute http(s) URL with a host, no spaces. */
export const MaxUrlLength = 2048
export const ReturnUrl = Text.pipe(
  Schema.maxLength(MaxUrlLength, { message: () => `must be at most ${MaxUrlLength} characters` }),
  Schema.pattern(/^https?:\/\/[^\s/?#]+[^\s]*$/, { message: () => "must be an http or https URL" }),
  Schema.annotations({
    title: "ReturnUrl",
    description: "Where the customer is sent afterwards: an absolute http or https URL"
  })
)

/** A rule a value breaks: `field` is the path in the domain's names (`perChargeCap`, `price.amount`). */
export type FieldProblem = { readonly field: string; readonly message: string }

/** A field of a domain input that may be `null` (absent); only a value is checked against `schema`. */
export const nullable = <S extends Schema.Schema.AnyNoContext>(schema: S) =>
  Schema.optionalWith(schema, { nullable: true })

/**
 * Every field rule `schema` finds broken in `value`, one problem per field (the first), each with its
 * path. Validators of the domain use it, so a field's rule is its schema, whether a request or a host's
 * call brings the value.
 */
export const problems =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (value: unknown): ReadonlyArray<FieldProblem> =>
    Either.match(Schema.decodeUnknownEither(schema, { errors: "all" })(value), {
      onRight: () => [],
      onLeft: (error) => {
        const byField = new Map<string, string>()
        for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
          const field = issue.path.map(String).join(".")
          if (!byField.has(field)) byField.set(field, issue.message)
        }
        // A nested field's problem also fails its parent's `null` alternative; the nested one says why.
        const fields = [...byField.keys()]
        return [...byField]
          .filter(([field]) => !fields.some((other) => other.startsWith(`${field}.`)))
          .map(([field, message]) => ({ field, message }))
      }
    })

/**
 * The problems of a value, one per field: starts with those of its fields' schemas; `add` records a
 * rule across fields unless that field already has a problem.
 */
export const collect = (initial: ReadonlyArray<FieldProblem>) => {
  const list: Array<FieldProblem> = [...initial]
  return {
    list: list as ReadonlyArray<FieldProblem>,
    add: (field: string, message: string): void => {
      if (!list.some((p) => p.field === field)) list.push({ field, message })
    }
  }
}
