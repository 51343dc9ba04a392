/**
 * A customer's phone number: a Maldivian number, kept and compared in E.164 (`+9607771234`) however it
 * was typed (`7771234`, `9607771234`, `+960 777 1234`, `00960 7771234`), so the wallet a number names is
 * found whichever spelling a customer, an operator or a test uses.
 */
import { Option, ParseResult, Schema } from "effect"

export const CountryCode = "960"

/** Spaces, hyphens, dots and brackets people put between digits; nothing else is ignored. */
const separators = /[\s().-]/g

/**
 * A subscriber number is seven digits; the first is 2 to 9 (0 starts a trunk or international prefix,
 * 1 the short service numbers), so `00960...` and `960...` cannot be mistaken for one.
 */
const spelled = /^(?:\+960|00960|960)?([2-9]\d{6})$/

/** The E.164 form of a Maldivian number however it is spelled; none for anything else. */
export const normalize = (typed: string): Option.Option<string> => {
  const m = spelled.exec(typed.replace(separators, ""))
  return m === null ? Option.none() : Option.some(`+${CountryCode}${m[1]}`)
}

/**
 * What a lookup by phone compares: the E.164 form, or for text that is no Maldivian number the text
 * itself, trimmed (which then finds no wallet, or the sandbox payer by its own placeholder).
 */
export const lookupKey = (typed: string): string => Option.getOrElse(normalize(typed), () => typed.trim())

export const Message = "must be a Maldivian phone number: seven digits, with or without +960"

/** A phone field of a request: any spelling of a Maldivian number in, E.164 out. */
export const Phone = Schema.transformOrFail(
  Schema.String,
  Schema.String.pipe(Schema.pattern(/^\+960[2-9]\d{6}$/)),
  {
    strict: true,
    decode: (typed, _, ast) =>
      Option.match(normalize(typed), {
        onNone: () => ParseResult.fail(new ParseResult.Type(ast, typed, Message)),
        onSome: ParseResult.succeed
      }),
    encode: ParseResult.succeed
  }
).annotations({
  title: "Phone",
  description: "A Maldivian phone number: 7771234, +960 777 1234, 00960 7771234 or +9607771234",
  jsonSchema: { type: "string", maxLength: 32, examples: ["+960 777 1234"] }
})
