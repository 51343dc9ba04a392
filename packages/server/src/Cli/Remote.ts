/**
 * How the CLI reaches a running service: its URL, the operator token or a merchant key, and a typed
 * client generated from the same `Api` the server serves (so requests and answers are decoded by the
 * schemas of the contract). Failures become one line a developer can act on.
 */
import { Options } from "@effect/cli"
// Deep imports: @effect/platform's index loads every module of the package.
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Cause, Config, Console, Effect, Option, ParseResult, Redacted } from "effect"
import { CliAgent } from "../Http/UserAgents.js"
import * as OpsToken from "../Platform/OpsToken.js"

export const url = Options.text("url").pipe(
  Options.withDescription(
    "The service's address (default LAARI_URL, else http://localhost:$PORT, port 4000)"
  ),
  Options.withFallbackConfig(
    Config.string("LAARI_URL").pipe(
      Config.orElse(() =>
        Config.map(Config.integer("PORT").pipe(Config.withDefault(4000)), (p) => `http://localhost:${p}`)
      )
    )
  )
)

export const opsToken = Options.redacted("ops-token").pipe(
  Options.withDescription(
    "The operator token (default LAARI_OPS_TOKEN, else the token the service generated in $LAARI_DATA_DIR/ops-token)"
  ),
  Options.withFallbackConfig(Config.redacted("LAARI_OPS_TOKEN")),
  Options.optional
)

export const apiKey = Options.redacted("key").pipe(
  Options.withDescription("A merchant's secret key, sk_test_... (default LAARI_API_KEY)"),
  Options.withFallbackConfig(Config.redacted("LAARI_API_KEY")),
  Options.optional
)

export const json = Options.boolean("json").pipe(Options.withDescription("Print the answer as JSON"))

/** The options of every operator command. */
export const operator = { url, opsToken, json }

/** A failure already explained to the user: printed as is, exit status 1. */
export class Refusal {
  readonly _tag = "Refusal"
  constructor(readonly message: string) {}
}

/** An error answer, as its problem body says it (the client's error schemas only encode). */
export class Problem {
  readonly _tag = "Problem"
  constructor(
    readonly status: number,
    readonly body: {
      readonly message?: string
      readonly code?: string
      readonly errors?: ReadonlyArray<unknown>
    }
  ) {}
}

/**
 * Authenticates every request, and turns an error answer into a `Problem` before the client decodes it;
 * a `401` into `refused`, when given.
 */
const bearer = (token: string, refused?: string) => ({
  // Typed as a plain client: a `Problem` reaches `report`, which explains any failure.
  transformClient: (client: HttpClient.HttpClient): HttpClient.HttpClient =>
    client.pipe(
      HttpClient.mapRequest(HttpClientRequest.bearerToken(token)),
      // What the audit log tells the CLI's changes by (`Http/AuditActor`).
      HttpClient.mapRequest(HttpClientRequest.setHeader("user-agent", `${CliAgent}/1`)),
      HttpClient.transformResponse(
        Effect.flatMap((response) =>
          response.status < 400
            ? Effect.succeed<HttpClientResponse.HttpClientResponse>(response)
            : response.status === 401 && refused !== undefined
              ? Effect.fail<Refusal | Problem>(new Refusal(refused))
              : Effect.flatMap(
                  Effect.orElseSucceed(response.json, () => ({})),
                  (body) => Effect.fail(new Problem(response.status, body as Problem["body"]))
                )
        )
      )
    ) as unknown as HttpClient.HttpClient
})

const passToken =
  "Pass the service's token with --ops-token or LAARI_OPS_TOKEN (its start-up lines say where it is kept), or set LAARI_DATA_DIR to the service's data folder."

/**
 * The operator token and where it came from: given (`--ops-token`, `LAARI_OPS_TOKEN`), else one saved
 * by a service in a folder `OpsToken.searchDirs` names. Of several saved ones, the one the service at
 * `baseUrl` accepts (the others belong to other services on this machine).
 */
const resolveOpsToken = (baseUrl: string, given: Option.Option<Redacted.Redacted>) =>
  Effect.gen(function* () {
    if (Option.isSome(given))
      return { token: Redacted.value(given.value), from: "the token given (--ops-token or LAARI_OPS_TOKEN)" }
    const dirs = OpsToken.searchDirs(
      Option.getOrUndefined(yield* Config.option(Config.string("LAARI_DATA_DIR")))
    )
    const saved = new Map<string, string>()
    for (const dir of dirs) {
      const token = OpsToken.read(dir)
      if (token !== undefined && !saved.has(token)) saved.set(token, OpsToken.pathOf(dir))
    }
    const looked = `looked in ${dirs.map(OpsToken.pathOf).join(", ")}`
    if (saved.size === 0) return yield* Effect.fail(new Refusal(`No operator token: ${looked}. ${passToken}`))
    const found = [...saved].map(([token, file]) => ({ token, from: `${file} (${looked})` }))
    if (found.length === 1) return found[0]!
    const http = yield* HttpClient.HttpClient
    for (const candidate of found) {
      const status = yield* http
        .execute(
          HttpClientRequest.get(`${baseUrl}/ops/clock`).pipe(HttpClientRequest.bearerToken(candidate.token))
        )
        .pipe(
          Effect.map((r) => r.status),
          Effect.orElseSucceed(() => 0)
        )
      if (status !== 401) return candidate
    }
    return found[0]!
  })

/**
 * The API's definition and the client maker, loaded by the commands that call the service: the whole
 * contract (every group's schemas, and core's domain behind them) is most of the CLI's start-up, and
 * `--help` or a mistyped command need none of it.
 */
const loadClient = Effect.promise(() =>
  Promise.all([import("../Api.js"), import("@effect/platform/HttpApiClient")])
)

/** A client of the whole API authenticated as the operator. */
export const opsClient = (baseUrl: string, token: Option.Option<Redacted.Redacted>) =>
  Effect.flatMap(
    Effect.zip(resolveOpsToken(baseUrl, token), loadClient),
    ([{ token, from }, [{ Api }, HttpApiClient]]) =>
      HttpApiClient.make(Api, {
        baseUrl,
        ...bearer(
          token,
          `Refused (401): the service at ${baseUrl} does not accept the operator token from ${from}. ${passToken}`
        )
      })
  )

/** A client of the whole API authenticated with a merchant's key. */
export const keyClient = (baseUrl: string, key: Option.Option<Redacted.Redacted>) =>
  Option.match(key, {
    onNone: () => Effect.fail(new Refusal("No API key: pass --key sk_test_... or set LAARI_API_KEY.")),
    onSome: (k) =>
      Effect.flatMap(loadClient, ([{ Api }, HttpApiClient]) =>
        Effect.map(HttpApiClient.make(Api, { baseUrl, ...bearer(Redacted.value(k)) }), (client) => ({
          client,
          key: Redacted.value(k)
        }))
      )
  })

const fieldErrors = (e: unknown): string => {
  const errors = (e as { errors?: ReadonlyArray<{ field?: string; message?: string }> }).errors
  return errors === undefined || errors.length === 0
    ? ""
    : `\n${errors.map((f) => `  ${f.field ?? ""}: ${f.message ?? ""}`).join("\n")}`
}

/** One line (or a few) saying what went wrong and what to do. */
export const explain = (baseUrl: string, error: unknown): string => {
  if (error instanceof Refusal) return error.message
  if (error instanceof Problem) {
    const { status, body } = error
    const what = `${body.code === undefined ? "" : `${body.code}: `}${body.message ?? "no details"}${fieldErrors(body)}`
    return status === 401
      ? `Refused (401): ${what}. Check --ops-token / --key (or LAARI_OPS_TOKEN / LAARI_API_KEY).`
      : `${status}: ${what}`
  }
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError")
      return `Cannot reach ${baseUrl}: is the service running (pnpm start, or laari serve)? Set --url or LAARI_URL otherwise.`
    return `The service answered ${error.response.status} to ${error.request.method} ${error.request.url}.`
  }
  if (ParseResult.isParseError(error)) {
    // The API's own schemas: a request that does not encode is refused before it is sent.
    const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
    return `Not valid for the API:\n${issues.map((i) => `  ${i.path.length === 0 ? "" : `${i.path.join(".")}: `}${i.message}`).join("\n")}`
  }
  const tagged = error as { readonly _tag?: string; readonly message?: string; readonly code?: string }
  if (tagged._tag === "Unauthorized")
    return `Refused (401): ${tagged.message ?? "unauthorized"}. Check --ops-token / --key (or LAARI_OPS_TOKEN / LAARI_API_KEY).`
  if (typeof tagged.message === "string")
    return `${tagged.code === undefined ? "" : `${tagged.code}: `}${tagged.message}${fieldErrors(error)}`
  return String(error)
}

/** Runs a command's work; a failure is printed as `explain` says and sets exit status 1. */
export const report =
  (baseUrl: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<void, never, Exclude<R, HttpClient.HttpClient>> =>
    self.pipe(
      Effect.asVoid,
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.void
          : Console.error(
              `laari: ${Option.match(Cause.failureOption(cause), {
                onNone: () => Cause.pretty(cause),
                onSome: (e) => explain(baseUrl, e)
              })}`
            ).pipe(
              Effect.zipRight(
                Effect.sync(() => {
                  process.exitCode = 1
                })
              )
            )
      ),
      Effect.provide(FetchHttpClient.layer)
    )

/** Prints `value` as JSON, or the `lines` a person reads. */
export const print = (asJson: boolean, value: unknown, lines: () => ReadonlyArray<string>) =>
  Console.log(asJson ? JSON.stringify(value, null, 2) : lines().join("\n"))
