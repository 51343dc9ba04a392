/**
 * Bodies that may be left out (a cancellation, a secret rotation): no body means `{}`; anything else
 * must be the JSON object of the schema. Read by the handler, since HttpApi's payloads are always
 * required; `document` puts the same schema in the OpenAPI document as an optional request body, and the
 * `Declared` annotation tells `Operation.group` to read it before an idempotent handler (its fingerprint).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Errors } from "@laari/core"
import { Context, Effect, ParseResult, Schema } from "effect"
import * as JsonSchema from "./JsonSchema.js"
import * as Problems from "./Problems.js"

export const read = <A, I>(schema: Schema.Schema<A, I>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
    const json =
      text.trim() === ""
        ? {}
        : yield* Effect.try({
            try: () => JSON.parse(text) as unknown,
            catch: () => new Problems.MalformedBody({ message: "The request body is not valid JSON" })
          })
    return yield* Schema.decodeUnknown(schema)(json).pipe(
      Effect.mapError((e) =>
        Errors.InvalidRequest.of(
          ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => ({
            field: i.path.join("."),
            message: i.message
          }))
        )
      )
    )
  })

/** The `requestBody` of the document for an optional body of `schema` (an `OpenApi.Override`). */
export const document = <A, I>(schema: Schema.Schema<A, I>) => ({
  requestBody: {
    required: false,
    content: { "application/json": { schema: JsonSchema.standalone(schema) } }
  }
})

/** The optional body an endpoint takes, declared beside its `document`. */
export class Declared extends Context.Tag("laari/server/OptionalBody/Declared")<
  Declared,
  Schema.Schema.AnyNoContext
>() {}
