/**
 * The text fields merchants send: one definition of each limit, used by the domain's validators
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

/** One issue of a failed decode as `ParseResult.ArrayFormatter` lists it (HttpApi's decode errors too). */
export type Issue = {
  readonly _tag: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** The alternatives `null` and absent of an optional field fail too; the real alternative says why. */
const absentAlternative = /^Expected (null|undefined), actual /

/** A literal alternative of a union that did not match: `Expected "MONTH", actual "YEAR"`. */
const literalAlternative = /^Expected ("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null), actual /

/** A value of the wrong JSON type: `Expected string, actual 5` says it in the decoder's words. */
const wrongType: ReadonlyArray<readonly [RegExp, string]> = [
  [/^Expected string, actual /, "must be a string"],
  [/^Expected (number|Int|Finite), actual /, "must be a number"],
  [/^Expected boolean, actual /, "must be true or false"],
  [/^Expected a Universally Unique Identifier, actual /, "must be a UUID"],
  [/^Expected ReadonlyArray<.*, actual /s, "must be an array"],
  [/^Expected (\{|Struct\b).*, actual /s, "must be an object"]
]

/** `"a", "b" or "c"` in words: `a or b`, `one of a, b, c`. */
const choice = (values: ReadonlyArray<string>): string =>
  values.length === 1
    ? values[0]!
    : values.length === 2
      ? `${values[0]} or ${values[1]}`
      : `one of ${values.join(", ")}`

const unquote = (literal: string): string => {
  // Stryker disable next-line MethodExpression: every literal the patterns capture starts with a quote exactly when it ends with one
  if (!literal.startsWith('"')) return literal
  try {
    return String(JSON.parse(literal))
  } catch {
    return literal
  }
}

/** Edit distance of two short names (the allowed fields of a body are a few, each a few letters). */
const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      )
    previous = current
  }
  return previous[b.length]!
}

/** The field of `allowed` someone who sent `key` most likely meant: its snake_case form, or a near spelling. */
export const closestField = (key: string, allowed: ReadonlyArray<string>): string | undefined => {
  // Stryker disable next-line MethodExpression: both sides are squashed alike, so upper case compares the same
  const squash = (name: string) => name.replace(/[-_\s]/g, "").toLowerCase()
  const wanted = squash(key)
  // A shortcut: a name equal once squashed is at distance 0, which the search below finds first anyway.
  // Stryker disable next-line ArrowFunction,ConditionalExpression: the shortcut (above)
  const same = allowed.find((a) => squash(a) === wanted)
  // Stryker disable next-line ConditionalExpression: the shortcut (above)
  if (same !== undefined) return same
  let best: { readonly name: string; readonly d: number } | undefined
  for (const name of allowed) {
    const target = squash(name)
    // Two slips (a swapped pair of letters) in a name of four or more letters, one in a shorter one.
    const tolerance = target.length < 4 ? 1 : Math.max(2, Math.floor(target.length / 4))
    // Stryker disable next-line ConditionalExpression: a shortcut, as the distance is at least the difference in length
    if (Math.abs(target.length - wanted.length) > tolerance) continue
    const d = distance(wanted, target)
    if (d <= tolerance && (best === undefined || d < best.d)) best = { name, d }
  }
  return best?.name
}

/** What an unknown field is told: the field meant, or the fields there are. */
const unknownField = (key: string, decoderMessage: string): string => {
  const at = decoderMessage.indexOf("expected:")
  // Stryker disable next-line ConditionalExpression,StringLiteral: without `expected:`, `slice(-1)` or any text without quotes lists no field either
  const listed = at === -1 ? "" : decoderMessage.slice(at)
  const allowed = [...listed.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => unquote(m[0]))
  const meant = closestField(key, allowed)
  if (meant !== undefined) return `is not a field; did you mean \`${meant}\`?`
  return allowed.length === 0 ? "is not a field" : `is not a field; the fields are ${allowed.join(", ")}`
}

/** One message for a field out of what the decoder said about it (several for a union). */
const oneMessage = (issues: ReadonlyArray<Issue>): string => {
  const unexpected = issues.find((i) => i._tag === "Unexpected")
  if (unexpected !== undefined)
    return unknownField(String(unexpected.path[unexpected.path.length - 1]), unexpected.message)
  const meaningful = issues.filter((i) => !absentAlternative.test(i.message))
  const said = meaningful.length > 0 ? meaningful : issues
  const literals = said.map((i) => literalAlternative.exec(i.message)?.[1])
  if (literals.every((l) => l !== undefined)) return `must be ${choice([...new Set(literals.map(unquote))])}`
  const first = said.find((i) => !literalAlternative.test(i.message)) ?? said[0]!
  if (first._tag === "Missing") return "is required"
  const typed = wrongType.find(([pattern]) => pattern.test(first.message))
  return typed === undefined ? first.message : typed[1]
}

/**
 * What a person reads of a failed decode: one message per field, in the order the fields failed. A
 * union's alternatives become one message (`must be one of A, B, C`; an optional field's `null` and
 * absent alternatives are not mentioned), an unknown field names the field meant, and a field whose
 * nested field failed is left to the nested one, which says why. Used for every decode error the API
 * answers and by the domain's validators, so the words are made in this one place.
 */
export const summarize = (issues: ReadonlyArray<Issue>): ReadonlyArray<FieldProblem> => {
  const byField = new Map<string, Array<Issue>>()
  const parents = new Set<string>()
  for (const issue of issues) {
    const field = issue.path.map(String).join(".")
    const list = byField.get(field)
    if (list === undefined) byField.set(field, [issue])
    else list.push(issue)
    for (let i = 1; i < issue.path.length; i++) parents.add(issue.path.slice(0, i).map(String).join("."))
  }
  return [...byField]
    .filter(([field]) => !parents.has(field))
    .map(([field, list]) => ({ field, message: oneMessage(list) }))
}

/**
 * Every field rule `schema` finds broken in `value`, one problem per field, each with its path.
 * Validators of the domain use it, so a field's rule is its schema, whether a request or a host's call
 * brings the value.
 */
export const problems =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (value: unknown): ReadonlyArray<FieldProblem> =>
    Either.match(Schema.decodeUnknownEither(schema, { errors: "all" })(value), {
      onRight: () => [],
      onLeft: (error) => summarize(ParseResult.ArrayFormatter.formatErrorSync(error))
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
