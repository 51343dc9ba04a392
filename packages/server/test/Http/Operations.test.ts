/**
 * Each operation's access and idempotency are declared once, on its endpoint: every
 * endpoint of both documents declares who may use it, the documents name each declared scope, keyed
 * endpoints are a merchant's, and no handler checks a scope or reads the `Idempotency-Key` header itself.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Auth } from "@laari/core"
import { Cause, Context, Effect, Exit, Layer, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Api } from "../../src/Api.js"
import * as Access from "../../src/Http/Access.js"
import * as Idempotent from "../../src/Http/Idempotent.js"
import * as Operation from "../../src/Http/Operation.js"
import { OpsDocumentApi } from "../../src/Routes.js"

const groups = (api: { readonly groups: Record<string, unknown> }) =>
  Object.values(api.groups) as ReadonlyArray<HttpApiGroup.HttpApiGroup.AnyWithProps>

const endpoints = (api: { readonly groups: Record<string, unknown> }) =>
  groups(api).flatMap((group) => Object.values(group.endpoints).map((endpoint) => ({ group, endpoint })))

/** Every source file of the server, by its path under `src`. */
const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : /\.tsx?$/.test(name) ? [path] : []
  })
const src = join(import.meta.dirname, "../../src")
const files = sources(src).map((path) => ({ path: relative(src, path), text: readFileSync(path, "utf8") }))

describe("operations declared once", () => {
  it("every endpoint of both APIs declares who may use it", () => {
    expect(endpoints(Api).length).toBeGreaterThan(60)
    expect(groups(Api).flatMap(Access.undeclared)).toEqual([])
    expect(groups(OpsDocumentApi).flatMap(Access.undeclared)).toEqual([])
  })

  it("each scoped operation's description names its scope, and no other", () => {
    const document: any = OpenApi.fromApi(Api)
    const scoped = endpoints(Api).flatMap(({ group, endpoint }) => {
      const rule = Access.ruleOf(group, endpoint)!
      return rule._tag === "Scoped" ? [{ endpoint, scope: rule.scope }] : []
    })
    expect(scoped.length).toBe(33)
    for (const { endpoint, scope } of scoped) {
      const path = endpoint.path.replace(/:(\w+)/g, "{$1}")
      const operation = document.paths[path][endpoint.method.toLowerCase()]
      const named = Auth.allScopes.filter((s) => operation.description.includes(`\`${s}\``))
      expect({ path, method: endpoint.method, named }).toEqual({
        path,
        method: endpoint.method,
        named: [scope]
      })
      // Named once: a hand-written sentence left beside the generated one would say it twice.
      expect(operation.description.split(`\`${scope}\``).length - 1).toBe(1)
      // Refused with `403` when the key lacks it: the document says so.
      expect(Object.keys(operation.responses)).toContain("403")
    }
  })

  it("each operation's description ends with what its rule says, written from the rule", () => {
    const document: any = OpenApi.fromApi(Api)
    const said = endpoints(Api).map(({ group, endpoint }) => {
      const path = endpoint.path.replace(/:(\w+)/g, "{$1}")
      const description: string = document.paths[path]?.[endpoint.method.toLowerCase()]?.description ?? ""
      return { group, endpoint, rule: Access.ruleOf(group, endpoint)!, description }
    })
    for (const { group, endpoint, rule, description } of said) {
      const sentence = Access.sentence(group, endpoint)
      if (sentence !== undefined) expect(description.endsWith(` ${sentence}`)).toBe(true)
      if (rule._tag === "Scoped")
        expect(description.includes("publishable key may")).toBe(rule.publishableAllowed)
    }
    const sentences = said.map(({ group, endpoint }) => Access.sentence(group, endpoint))
    expect(sentences.filter((s) => s?.startsWith("Scope `")).length).toBe(30)
    expect(sentences.filter((s) => s?.startsWith("A secret key with scope `checkout:write`")).length).toBe(2)
    expect(sentences.filter((s) => s?.startsWith("Sandbox only")).length).toBe(6)
  })

  it("writes the sentence from the rule: the group's, an endpoint's own, and its publishable siblings", () => {
    const described = (group: {
      readonly endpoints: Record<string, { readonly annotations: Context.Context<never> }>
    }) =>
      Object.values(group.endpoints).map((e) =>
        Context.getOrElse(e.annotations, OpenApi.Description, () => "")
      )
    const read = HttpApiEndpoint.get("read", "/read").addSuccess(Schema.String)
    const secret = HttpApiGroup.make("secret")
      .add(read.annotate(OpenApi.Description, "Reads."))
      .add(HttpApiEndpoint.get("bare", "/bare").addSuccess(Schema.String))
      .add(
        HttpApiEndpoint.get("pay", "/pay")
          .addSuccess(Schema.String)
          .annotate(Access.Access, Access.scoped("payments:write"))
          .annotate(OpenApi.Description, "Pays.")
      )
      .annotate(Access.Access, Access.scoped("qr:write"))
    expect(described(Access.documented(secret))).toEqual([
      "Reads. Scope `qr:write`.",
      "Scope `qr:write`.",
      "Pays. Scope `payments:write`."
    ])
    const mixed = secret.add(
      HttpApiEndpoint.post("make", "/make")
        .addSuccess(Schema.String)
        .annotate(Access.Access, Access.publishable("qr:write"))
        .annotate(OpenApi.Description, "Makes; a publishable key may too.")
    )
    expect(described(Access.documented(mixed))).toEqual([
      "Reads. A secret key with scope `qr:write`.",
      "A secret key with scope `qr:write`.",
      "Pays. A secret key with scope `payments:write`.",
      "Makes; a publishable key may too."
    ])
    const sandbox = HttpApiGroup.make("sandbox").add(read).annotate(Access.Access, Access.sandbox)
    expect(described(Access.documented(sandbox))).toEqual([
      "Sandbox only: any `sk_test_` secret key; a live key gets `404`."
    ])
    const open = HttpApiGroup.make("open").add(read).annotate(Access.Access, Access.anyone)
    expect(described(Access.documented(open))).toEqual([""])
  })

  it("keyed endpoints belong to a merchant: a scope or the sandbox", () => {
    const keyed = endpoints(Api).filter(({ endpoint }) => Idempotent.isKeyed(endpoint))
    expect(keyed.map(({ group, endpoint }) => `${group.identifier}.${endpoint.name}`).sort()).toEqual(
      [
        "checkout.cancel",
        "checkout.create",
        "mandates.charge",
        "mandates.create",
        "mandates.revoke",
        "qrCodes.create",
        "qrCodes.deactivate",
        "refunds.create",
        "subscriptions.cancel",
        "testHelpers.payCheckoutSession",
        "testHelpers.payQrCode",
        "webhookEndpoints.create",
        "webhookEndpoints.resend",
        "webhookEndpoints.rotateSecret",
        "webhookEndpoints.update"
      ].sort()
    )
    for (const { group, endpoint } of keyed)
      expect(["Scoped", "Sandbox"]).toContain(Access.ruleOf(group, endpoint)?._tag)
  })

  it("no handler checks a scope, reads the Idempotency-Key header, or builds a group around Operation", () => {
    // The header is named where it is declared (`Idempotent`) and documented (`OpenApiDocument`); the
    // CLI, a client, sends it.
    const allowed = ["Http/Idempotent.ts", "Http/OpenApiDocument.ts"]
    const naming = files.filter(
      (f) => !allowed.includes(f.path) && !f.path.startsWith("Cli/") && /["']idempotency-key["']/.test(f.text)
    )
    expect(naming.map((f) => f.path)).toEqual([])
    expect(files.filter((f) => /\bwithScope\b|\bwithSandbox\b/.test(f.text)).map((f) => f.path)).toEqual([])
    // A scope literal appears only in declarations (`*/Api.ts`) and where scopes are listed or granted.
    const literal = /"(mandates|qr|checkout|subscriptions|payments|webhooks):write"/
    const granting = ["Cli/", "Ops/", "OAuth/", "Onboarding.ts", "Pages/DashboardText.ts"]
    expect(
      files
        .filter((f) => !f.path.endsWith("/Api.ts") && !granting.some((g) => f.path.startsWith(g)))
        .filter((f) => literal.test(f.text))
        .map((f) => f.path)
    ).toEqual([])
    expect(
      files
        .filter((f) => f.path !== "Http/Operation.ts" && f.text.includes("HttpApiBuilder.group("))
        .map((f) => f.path)
    ).toEqual([])
  })

  it("a group whose endpoint declares no rule does not build", async () => {
    class Undeclared extends HttpApiGroup.make("undeclared").add(
      HttpApiEndpoint.get("read", "/read").addSuccess(Schema.String)
    ) {}
    class Tiny extends HttpApi.make("tiny").add(Undeclared) {}
    expect(Access.undeclared(Undeclared)).toEqual(["undeclared.read"])
    const layer = Operation.group(Tiny, "undeclared", (handlers) =>
      handlers.handle("read", () => Effect.succeed("x"))
    )
    const exit = await Effect.runPromiseExit(
      Effect.scoped(
        Layer.build(layer.pipe(Layer.provide(HttpApiBuilder.Router.Live))) as unknown as Effect.Effect<
          unknown,
          unknown
        >
      )
    )
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit))
      expect(Cause.pretty(exit.cause)).toContain("undeclared.read declares no access rule")
  })

  it("extras for an endpoint that is not keyed stop the group from building", async () => {
    class Mixed extends HttpApiGroup.make("mixed")
      .add(HttpApiEndpoint.get("read", "/read").addSuccess(Schema.String))
      .add(Idempotent.post("write", "/write").addSuccess(Schema.String))
      .annotate(Access.Access, Access.scoped("mandates:write")) {}
    class Tiny extends HttpApi.make("tiny").add(Mixed) {}
    const build = (extras: Operation.Extras) =>
      Effect.runPromiseExit(
        Effect.scoped(
          Layer.build(
            Operation.group(
              Tiny,
              "mixed",
              (handlers) =>
                handlers.handle("read", () => Effect.succeed("x")).handle("write", () => Effect.succeed("y")),
              extras
            ).pipe(Layer.provide(HttpApiBuilder.Router.Live))
          ) as unknown as Effect.Effect<unknown, unknown>
        )
      )
    const ahead = () => Effect.void
    expect(Exit.isSuccess(await build({ ahead: { write: ahead } }))).toBe(true)
    const exit = await build({ ahead: { read: ahead } })
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit))
      expect(Cause.pretty(exit.cause)).toContain(
        "mixed: ahead for read, which is not a keyed endpoint of the group"
      )
    const typo = await build({ conceal: { wirte: () => ({}) as never } })
    expect(Exit.isFailure(typo)).toBe(true)
  })
})
