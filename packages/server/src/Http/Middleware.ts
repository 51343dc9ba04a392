/**
 * The edges of every request, applied inside HttpApi (before it decodes anything or encodes errors):
 *
 * - before decoding, a body of another content type than JSON is refused `415`, from
 *   its headers alone: no byte of a body is read before the endpoint's security has checked the key
 *   (HttpApi authenticates, then decodes), so a caller without a valid key gets its `401` however large
 *   the body;
 * - a body is read once, by HttpApi, up to `maxBodyBytes` (`413` past it; the edge refuses a declared
 *   length and cuts off a chunked one);
 * - after, decode failures become `422` with the fields, or `400` for a body nested deeper than `MaxDepth`,
 *   a body that is not JSON `400`, an unknown route a JSON `404`, and a defect a JSON `500` that leaks no
 *   stack trace (and is logged).
 *
 * Which paths read their bodies themselves is the caller's to say (`Routes`): the edge names no feature.
 */
import * as HttpApiError from "@effect/platform/HttpApiError"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMethod from "@effect/platform/HttpMethod"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Fields } from "@laari/core"
import { Cause, Effect, Either, Option } from "effect"
import * as Answers from "./Answers.js"
import * as Problems from "./Problems.js"

/**
 * Deepest nesting of arrays and objects a body may have. Every request schema is a few levels deep; far
 * deeper input would only exhaust the stack of whatever walks it (the decode error formatter does).
 */
export const MaxDepth = 64

/**
 * A `422` lists at most this many fields, each message at most `MaxMessage` characters: a body of a
 * thousand unknown keys, or a message quoting a megabyte of input, would otherwise answer megabytes.
 */
const MaxIssues = 20
const MaxMessage = 300
/** A union reports an issue per alternative (13 for an unknown event type): read enough to merge them. */
const MaxIssuesRead = 500

const clip = (text: string) => (text.length > MaxMessage ? `${text.slice(0, MaxMessage)}...` : text)

const isServerError = (u: unknown, tag: string) => HttpServerError.isServerError(u) && u._tag === tag

/** Whether a request carries a body: a non-zero length, or one that is not declared (chunked). */
const hasBody = (request: HttpServerRequest.HttpServerRequest): boolean => {
  if (!HttpMethod.hasBody(request.method)) return false
  const length = request.headers["content-length"]
  if (length !== undefined) return length.trim() !== "0"
  return request.headers["transfer-encoding"] !== undefined
}

/** `application/json`, with or without parameters (`; charset=utf-8`). */
const isJson = (contentType: string | undefined): boolean =>
  contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === "application/json"

/** `application/x-www-form-urlencoded`: what the hosted pages' forms post. */
const isForm = (contentType: string | undefined): boolean =>
  contentType !== undefined &&
  contentType.split(";")[0]!.trim().toLowerCase() === "application/x-www-form-urlencoded"

/** Whether JSON text nests arrays and objects deeper than `max`; brackets inside strings do not count. */
export const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      // A backslash escapes the next character, a quote among them.
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

/** The platform fails a read past `MaxBodySize` with this cause (NodeStream `toString`). */
const isOverLimit = (error: unknown): boolean =>
  HttpServerError.isServerError(error) &&
  error._tag === "RequestError" &&
  error.cause instanceof Error &&
  error.cause.message === "maxBytes exceeded"

/** The routes that read their own bodies, which the content type check leaves alone. */
export interface OwnBodies {
  /** Paths that answer every body themselves, as their specifications say. */
  readonly anyBody: (pathname: string) => boolean
  /** Paths that read form posts themselves, within the same size limit. */
  readonly forms: (pathname: string) => boolean
}

/** Refuses, from its headers, a body HttpApi would not read as JSON. */
const checkContentType = (
  own: OwnBodies
): Effect.Effect<Problems.UnsupportedMediaType | undefined, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!hasBody(request)) return undefined
    const contentType = request.headers["content-type"]
    const pathname = new URL(request.url, "http://laari").pathname
    if (own.anyBody(pathname)) return undefined
    if (isForm(contentType) && own.forms(pathname)) return undefined
    return isJson(contentType) ? undefined : new Problems.UnsupportedMediaType()
  })

/**
 * Whether the body HttpApi read nests deeper than `MaxDepth`: the platform keeps the text it read on the
 * request, so this reads nothing more.
 */
const nestedTooDeep = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
  Effect.map(
    Effect.either(request.text),
    (text) => Either.isRight(text) && nestsDeeperThan(text.right, MaxDepth)
  )
)

const tooDeep = new Problems.MalformedBody({
  message: `The request body nests deeper than ${MaxDepth} levels`
})

/** Maps what HttpApi fails or dies with to the API's own statuses and problem bodies. */
const mapCause = (maxBodyBytes: number) => (cause: Cause.Cause<never>) => {
  // The middleware's type says nothing fails here, but decode failures and security refusals do.
  const failure: unknown = Option.getOrUndefined(Cause.failureOption(cause))
  if (failure instanceof HttpApiError.HttpApiDecodeError)
    return Effect.map(nestedTooDeep, (deep) => {
      // Describing a value nested thousands deep would exhaust the stack of whatever walks it.
      if (deep) return Answers.edge.respond(tooDeep)
      // The words are core's (`Fields.summarize`); the issues read are bounded, so is what they cost.
      const errors = Fields.summarize(failure.issues.slice(0, MaxIssuesRead))
        .slice(0, MaxIssues)
        .map((p) => ({ field: clip(p.field), message: clip(p.message) }))
      return Answers.edge.respond(Problems.Undecodable.fromIssues(errors))
    })
  if (isServerError(failure, "RouteNotFound"))
    return Effect.succeed(Answers.edge.respond(new Problems.NotFound()))
  if (failure !== undefined || Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
  // HttpApi reads a JSON body with `orDie`: a body that does not parse, or is too large, arrives here.
  const defect = Option.getOrUndefined(Cause.dieOption(cause))
  if (isOverLimit(defect)) return Effect.succeed(Answers.edge.respond(Problems.BodyTooLarge.of(maxBodyBytes)))
  if (isServerError(defect, "RequestError"))
    return Effect.succeed(
      Answers.edge.respond(new Problems.MalformedBody({ message: "The request body is not valid JSON" }))
    )
  // A body nested thousands deep decodes (JSON.parse is iterative) but overflows the stack of the schema's
  // description of it: that is the body's fault, answered as such.
  return Effect.flatMap(nestedTooDeep, (deep) =>
    deep
      ? Effect.succeed(Answers.edge.respond(tooDeep))
      : // Never expected, so never documented: a bare `500` that leaks nothing.
        Effect.logError("unhandled defect", cause).pipe(
          Effect.as(HttpServerResponse.unsafeJson({ message: "Internal error" }, { status: 500 }))
        )
  )
}

/**
 * The edges above as a middleware of HttpApi's app: `Routes` installs it on the API
 * (`HttpApiBuilder.middleware`) with the configured body limit and the routes that read their own bodies.
 */
export const mapErrors =
  (options: { readonly maxBodyBytes: number; readonly own: OwnBodies }) => (app: HttpApp.Default) =>
    Effect.flatMap(checkContentType(options.own), (refusal) =>
      refusal === undefined ? app : Effect.succeed(Answers.edge.respond(refusal))
    ).pipe(
      Effect.catchAllCause(mapCause(options.maxBodyBytes)),
      // Every read of the body stops past the limit and frees what it read.
      HttpIncomingMessage.withMaxBodySize(Option.some(options.maxBodyBytes))
    )
