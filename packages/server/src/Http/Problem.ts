/**
 * How an error becomes an answer of the API: one schema per error, carrying its status, its description
 * and the body exactly as sent, `{ message, code, errors? }`. The edge's and the common schemas are
 * declared in `Problems`, each feature's own errors in its folder's `Problems.ts`.
 *
 * Endpoints list the errors they can fail with (`addError(MandatesProblems.MandateNotFound)`): that
 * documents them in `/openapi.json`, lets the compiler refuse a handler failing with anything unlisted,
 * and is what an error outside HttpApi's own encoding is answered from (`Answers`). An error's status
 * belongs to the error, not to the endpoint, and is written once. Where one error answers with several
 * statuses (a charge refusal's code, a payment's reason) each status is its own schema, accepting only
 * its codes, so the document says which codes each status carries.
 *
 * Every body carries a `code`, an UPPER_SNAKE constant declared on its schema (the spec's where it names
 * one): the alternatives one status of one operation may answer with (a `409` "request in progress" or
 * "reference taken") are told apart by it, so a client knows whether to retry without reading `message`.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Errors } from "@laari/core"
import { Option, ParseResult, Schema, SchemaAST } from "effect"

const CodeDescription = "A stable UPPER_SNAKE constant naming the error; each error's schema declares its own"

export const Message = Schema.String.annotations({
  description: "What went wrong, in words a person can act on"
})

/** The documented shape of every error body; each error's schema is one of its variants. */
export const Body = Schema.Struct({
  message: Message,
  code: Schema.String.annotations({ description: CodeDescription }),
  errors: Schema.optional(
    Schema.Array(Errors.FieldError).annotations({ description: "Each field's problem, on a `422`" })
  )
}).annotations({ identifier: "Error" })

/** A class of tagged errors; `never` arguments accept every constructor. */
export type ErrorClass<E> = (abstract new (...args: never) => E) & { readonly _tag: string }

export const isInstance =
  <E>(Class: ErrorClass<E>) =>
  (u: unknown): u is E =>
    u instanceof Class

/**
 * The `_tag`s of the errors a schema answers, on the schema itself: `Answers` finds an error's schema by
 * its tag. The document generator reads only the annotations it knows, so this one changes no document.
 */
const TagsId: unique symbol = Symbol.for("laari/Problem/Tags")

/** The tags a schema of this module answers; none for any other schema. */
export const tagsOf = (schema: Schema.Schema.All): ReadonlyArray<string> =>
  Option.getOrElse(SchemaAST.getAnnotation<ReadonlyArray<string>>(schema.ast, TagsId), () => [])

/**
 * The schema of an error answered with `status`: encodes the values `is` accepts, all tagged one of
 * `tags`, into `body(e)`. Error bodies are only ever encoded by the server; decoding one is refused.
 */
export const problem = <E, W>(
  identifier: string,
  status: number,
  description: string,
  tags: readonly [string, ...Array<string>],
  is: (u: unknown) => u is E,
  wire: Schema.Schema<W>,
  body: (e: E) => W
) =>
  Schema.transformOrFail(wire, Schema.declare(is, { identifier: `${identifier}Value` }), {
    strict: true,
    decode: (w, _, ast) =>
      ParseResult.fail(new ParseResult.Forbidden(ast, w, "Error bodies are encode-only")),
    encode: (e) => ParseResult.succeed(body(e))
  }).annotations({ identifier, [TagsId]: tags, ...HttpApiSchema.annotations({ status, description }) })

/** The `code` of a body: the one value it may take, declared so the document tells alternatives apart. */
export const Code = <const C extends string>(code: C) =>
  Schema.Literal(code).annotations({ description: CodeDescription })

/** An error whose body is its `message` and its one `code`. */
export const plain = <E extends { readonly message: string }, const C extends string>(
  Class: ErrorClass<E>,
  identifier: string,
  status: number,
  description: string,
  code: C
) =>
  problem(
    identifier,
    status,
    description,
    [Class._tag],
    isInstance(Class),
    Schema.Struct({ message: Message, code: Code(code) }),
    (e: E) => ({ message: e.message, code })
  )

/** An error with a `code`, answered with `status` for the `codes` listed (other codes are other schemas). */
export const coded = <E extends { readonly message: string }, const Code extends string>(
  Class: ErrorClass<E>,
  codeOf: (e: E) => string,
  identifier: string,
  status: number,
  description: string,
  codes: readonly [Code, ...Array<Code>]
) =>
  problem(
    identifier,
    status,
    description,
    [Class._tag],
    (u: unknown): u is E => u instanceof Class && (codes as ReadonlyArray<string>).includes(codeOf(u)),
    Schema.Struct({
      message: Message,
      code: Schema.Literal(...codes).annotations({ description: CodeDescription })
    }),
    (e: E) => ({ message: e.message, code: codeOf(e) as Code })
  )

/** A kebab-case reason of the domain as the `code` of the body: `already-paid` is `ALREADY_PAID`. */
export const codeOfReason = (reason: string): string => reason.toUpperCase().replaceAll("-", "_")

/** An error's kebab-case `reason` as its code (`codeOfReason`). */
export const byReason = (e: { readonly reason: string }) => codeOfReason(e.reason)

/**
 * The schemas of an error answered with several statuses, one per status (`<name><status>`), each
 * accepting only the codes listed (`codeOf`, within `Codes`).
 */
export const perStatus =
  <E extends { readonly message: string }, Codes extends string = string>(
    Class: ErrorClass<E>,
    name: string,
    codeOf: (e: E) => Codes
  ) =>
  <const Code extends Codes>(status: number, description: string, codes: readonly [Code, ...Array<Code>]) =>
    coded(Class, codeOf, `${name}${status}`, status, description, codes)

/** The wallet's refusals of a payment, one schema per status: QR payments' and checkout's alike. */
export const declined = <E extends { readonly message: string; readonly reason: string }>(
  Class: ErrorClass<E>,
  name: string
) => {
  const at = perStatus(Class, name, byReason)
  return {
    PaymentRequired: at(402, "The wallet cannot cover the payment", ["INSUFFICIENT_BALANCE"]),
    Unprocessable: at(422, "The wallet refused the payment: a limit, a frozen wallet, a rule, or an error", [
      "WALLET_LIMIT",
      "WALLET_FROZEN",
      "BLOCKED_BY_RULES",
      "EXECUTOR_ERROR"
    ])
  }
}

/**
 * A field's name on the wire: core names fields as the domain does (`perChargeCap`, `priceData.amount`),
 * requests in snake_case (`per_charge_cap`, `price_data.amount`).
 */
export const wireField = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** A domain message naming a field (`must equal priceData.amount`) names it as the wire does. */
export const wireText = (text: string): string =>
  text.replace(/\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+(?:\.[a-z][a-zA-Z0-9]*)*/g, wireField)
