/**
 * Request field formats shared by every feature: the shape rules of the wire. Rules that need the
 * domain (caps, lifetimes) live in core.
 */
import { Calendar, Fields as CoreFields } from "@laari/core"
import { type DateTime, Option, Schema } from "effect"

/**
 * Every text a request carries: well-formed Unicode without a NUL character (core's definition, which
 * the length-limited fields of core build on).
 */
export const Text = CoreFields.Text

/**
 * Text of at most `max` characters whose refusal names the rule. Effect words a failed filter from its
 * description, and a field's own description (what the field is) replaces the filter's: without a
 * message of its own the `422` would repeat the field's documentation instead of what is wrong.
 */
export const TextUpTo = (max: number) =>
  Text.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

/** A UUID, refused as such whatever the field's description says (see `TextUpTo`). */
export const Uuid = Schema.UUID.annotations({ message: () => "must be a UUID" })

/**
 * An id in a path: never empty (an empty segment names no resource, and the document must not call it
 * valid: `/events/` is the list, not an event), at most 255 characters.
 */
export const PathSegment = Text.pipe(Schema.minLength(1), Schema.maxLength(255))

/**
 * A request body: unknown fields are refused by name (as Stripe refuses unknown parameters) instead of
 * being silently dropped, and every problem is reported at once. Applies to nested objects too.
 */
export const Body = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } })

/** An optional request field that may also be sent as `null`. */
export const optionalNullable = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optional(Schema.NullOr(schema))

/** ISO 8601 with a numeric UTC offset and no fractional seconds. */
export const OffsetDateTime = Text.pipe(
  Schema.filter((s) => Option.isSome(Calendar.parseOffsetDateTime(s)), {
    message: () => "must be an ISO 8601 date-time with a numeric UTC offset and no fractional seconds"
  })
)

export const TimeZone = Text.pipe(
  Schema.filter(Calendar.isTimeZone, { message: () => "must be an IANA time zone such as Indian/Maldives" })
)

/**
 * `limit` (1 to 100, default 25) and `offset` (0 or more) of every list. Query values arrive as text;
 * the document describes them as the integers they decode to.
 */
export const Paging = {
  limit: Schema.optional(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.between(1, 100, { message: () => "limit must be a whole number from 1 to 100" })
    ).annotations({
      jsonSchema: {
        type: "integer",
        minimum: 1,
        maximum: 100,
        default: 25,
        description: "How many items to return, newest first"
      }
    })
  ),
  offset: Schema.optional(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.nonNegative({ message: () => "offset must be 0 or more" })
    ).annotations({
      jsonSchema: { type: "integer", minimum: 0, default: 0, description: "How many items to skip" }
    })
  )
}

/**
 * Whole numbers of a read, with what they are. Effect's `Schema.Int` and `Schema.NonNegativeInt` are
 * published as `$ref`s to schemas of their own, and a generator drops a description beside a `$ref`:
 * these are published inline, with theirs.
 */
export const WholeNumber = (description: string) =>
  Schema.Number.pipe(Schema.int()).annotations({ description })

/** Laari in a read: a whole number, 0 or more (100 laari = 1 MVR). */
export const Laari = (description: string) =>
  Schema.Number.pipe(Schema.int(), Schema.nonNegative()).annotations({ description })

/** A moment in a read: Maldives time, `+05:00`, whole seconds. */
export const Timestamp = Schema.String.annotations({
  jsonSchema: { format: "date-time" },
  description: "Maldives time (+05:00), whole seconds"
})

/** A moment that may be absent, as a read shows it. */
export const timeOrNull = (t: DateTime.Utc | null): string | null =>
  t === null ? null : Calendar.formatMaldives(t)

/** `{id}` in a path: a UUID is looked up as an id, anything else as the merchant's reference. */
export const IdOrReference = (resource: string) =>
  Schema.Struct({
    id: CoreFields.Reference.annotations({
      description: `The ${resource}'s UUID, or the merchant's reference for it`
    })
  })

export const page = (params: {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}) => ({
  limit: params.limit ?? 25,
  offset: params.offset ?? 0
})
