/**
 * The layout's rules (issue 25), read off the source the way the compiler reads its imports: no cycle
 * between files or between folders anywhere in the workspace; core imports nothing but `effect` and
 * `temporal-polyfill`, its `kernel/` no feature and its features never the root; the server's `Http/`
 * holds edge mechanics only; no front end (REST handlers, GraphQL, pages, CLI) reaches storage around
 * core's services; no source file is over 500 lines. Each rule's checker is also shown a breach.
 */
import { dirname } from "node:path"
import { describe, expect, it } from "vitest"
import * as ImportGraph from "./support/ImportGraph.js"

const core = "packages/core/src"
const server = "packages/server/src"

const trees = [
  core,
  server,
  "packages/testkit/src",
  "examples/embed/src",
  "examples/host-wallet/src",
  "examples/qr-render/src",
  "examples/subscription-clock/src",
  "examples/webhook-receiver/src",
  "examples/wallet-core/src",
  "bench/src",
  "scripts"
]

const files = ImportGraph.read(trees)
const under = (tree: string) => files.filter((file) => file.path.startsWith(`${tree}/`))
const folderOf = (tree: string, path: string) => dirname(path).slice(tree.length + 1) || "."

/**
 * Core's storage ports, as a front end would name them through `@laari/core`: the `Store` namespace (every
 * repository, the `Transactor`, and the models it re-exports) and the ports that live in their features.
 * A front end reads and writes through the services over them (`Reads`, `Mandates`, ...).
 */
const ports = [
  "Store",
  "Idempotency.IdempotencyStore",
  "Notifications.Notifications",
  "EventLog.EventLog",
  "Wallet.Wallet",
  "Balance.LedgerReads",
  "DeliveriesStore",
  "NoticeOutbox",
  "Merchant.MerchantsStore",
  "OAuthClient.OAuthClientsStore",
  "WebhookEndpoint.WebhookEndpointsStore"
]
const literal = (name: string) => name.replace(".", "\\.")
const portPattern = new RegExp(`\\b(?:${ports.map(literal).join("|")})\\b(?:\\.[A-Z]\\w*)?`, "g")

/** What in `file` reaches storage around core: a port named, the SQL client, an import of `Sql/`. */
const reachesStorage = (file: Pick<ImportGraph.File, "text" | "local">): ReadonlyArray<string> => [
  ...new Set([
    ...[...file.text.matchAll(portPattern)].map((m) => m[0]),
    ...[...file.text.matchAll(/\bSqlClient\b/g)].map((m) => m[0]),
    ...file.local.filter((path) => path.startsWith(`${server}/Sql/`))
  ])
]

/**
 * The server's front ends: the REST handlers and their declarations in each feature folder, GraphQL, the
 * pages and the CLI. `Http/` is the edge they share, and `Health/` answers whether the database is there,
 * which it asks the database itself.
 */
const isFrontEnd = (path: string): boolean => {
  const folder = folderOf(server, path)
  if (["GraphQL", "Pages", "Cli"].includes(folder)) return true
  return !["Http", "Health", "."].includes(folder) && /\/(Api|Http|Json)\.tsx?$/.test(path)
}

describe("the import graph", () => {
  it("reads every tree, and knows where imports go", () => {
    for (const tree of trees) expect(under(tree).length, tree).toBeGreaterThan(0)
    const engine = files.find((file) => file.path === `${core}/Engine.ts`)
    expect(engine?.local).toContain(`${core}/mandates/Mandates.ts`)
    expect(engine?.external).toContain("effect")
  })

  it("finds a cycle wherever there is one, and none in a graph without", () => {
    const graph = (edges: Record<string, ReadonlyArray<string>>) =>
      new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)]))
    expect(ImportGraph.cycles(graph({ a: ["b", "c"], b: ["c"], c: [] }))).toEqual([])
    expect(ImportGraph.cycles(graph({ a: ["b"], b: ["c"], c: ["a"], d: ["a"] }))).toEqual([["a", "b", "c"]])
    expect(ImportGraph.cycles(graph({ a: ["a"], b: [] }))).toEqual([["a"]])
    expect(ImportGraph.cycles(graph({ a: ["b"], b: ["a"], c: ["d"], d: ["c"] }))).toHaveLength(2)
  })

  it.each(trees)("%s: no cycle between files, nor between folders", (tree) => {
    const mine = under(tree)
    expect(ImportGraph.cycles(ImportGraph.fileGraph(mine))).toEqual([])
    expect(ImportGraph.cycles(ImportGraph.folderGraph(mine))).toEqual([])
  })
})

describe("core", () => {
  const mine = under(core)

  it("imports nothing but effect and temporal-polyfill: no Node, no SQL, no HTTP", () => {
    const external = new Set(mine.flatMap((file) => file.external))
    expect([...external].sort()).toEqual(["effect", "temporal-polyfill"])
  })

  it("kernel/ imports no feature, and no feature imports the root", () => {
    const breaches = mine.flatMap((file) => {
      const folder = folderOf(core, file.path)
      if (folder === ".") return []
      return file.local
        .map((target) => folderOf(core, target))
        .filter((target) => target === "." || (folder === "kernel" && target !== "kernel"))
        .map((target) => `${file.path} -> ${target}`)
    })
    expect(breaches).toEqual([])
  })
})

describe("the server", () => {
  const mine = under(server)

  it("Http/ holds edge mechanics: it imports no feature, page or adapter", () => {
    const reached = mine
      .filter((file) => folderOf(server, file.path) === "Http")
      .flatMap((file) => file.local.map((target) => folderOf(server, target)))
    expect([...new Set(reached)].sort()).toEqual(["Http", "Platform"])
  })

  it("no front end reaches storage around core's services", () => {
    const frontEnds = mine.filter((file) => isFrontEnd(file.path))
    expect(frontEnds.map((file) => file.path)).toEqual(
      expect.arrayContaining([
        `${server}/Mandates/Http.ts`,
        `${server}/GraphQL/Schema.ts`,
        `${server}/Pages/Dashboard.tsx`,
        `${server}/Cli/Commands.ts`
      ])
    )
    const breaches = frontEnds.flatMap((file) => reachesStorage(file).map((what) => `${file.path}: ${what}`))
    expect(breaches).toEqual([])
  })

  it("the storage rule sees a port, the SQL client and an adapter, and lets services through", () => {
    const seen = (text: string, local: ReadonlyArray<string> = []) => reachesStorage({ text, local })
    expect(seen("const m = yield* Store.Merchants")).toEqual(["Store.Merchants"])
    expect(seen("const tx = yield* Store.Transactor")).toEqual(["Store.Transactor"])
    expect(seen("yield* Notifications.Notifications")).toEqual(["Notifications.Notifications"])
    expect(seen("yield* Idempotency.IdempotencyStore")).toEqual(["Idempotency.IdempotencyStore"])
    expect(seen("yield* SqlClient.SqlClient")).toEqual(["SqlClient"])
    expect(seen("", [`${server}/Sql/Mandates.ts`])).toEqual([`${server}/Sql/Mandates.ts`])
    expect(seen("yield* Reads.Reads; yield* Mandates.Mandates; Idempotency.KeyReused")).toEqual([])
    expect(seen("(n: Notifications.Notification) => n.id")).toEqual([])
  })
})

describe("file size", () => {
  it("no source file is over 500 lines", () => {
    const long = files.filter((file) => file.lines > 500).map((file) => `${file.path}: ${file.lines}`)
    expect(long).toEqual([])
  })
})
