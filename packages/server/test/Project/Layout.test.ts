/**
 * The layout's rules, read off the source the way the compiler reads its imports: no cycle
 * between files or between folders anywhere in the workspace; core imports nothing but `effect` and
 * `temporal-polyfill`, its `kernel/` no feature and its features never the root, and it reads no clock,
 * randomness or environment but through its ports; the server's `Http/`
 * holds edge mechanics only; no front end (REST handlers, GraphQL, pages, CLI) reaches storage around
 * core's services; no SQL client outside `Sql/`, and no port outside `Platform/`; core's ports each in
 * their home (a `*Store.ts`, or a file of their own); no two exported classes of the packages share a
 * name; no source file is over 500 lines, and no test file over 800; every server test is in the folder of
 * what it tests. Each rule's checker is also shown a breach.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import * as ImportGraph from "../support/ImportGraph.js"

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
  "Notifications.Notifications",
  "EventLog.EventLog",
  "Wallet.Wallet",
  "DeliveriesStore",
  "NoticeOutbox"
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

/**
 * Core's tags away from their home. A `*Store.ts` holds a feature's storage ports, each named `…Store`
 * (`mandates/MandatesStore.ts`: `MandatesStore`, `ChargesStore`). Any other file may declare one tag,
 * named as the file is (`kernel/Crypto.ts`: `Crypto`): a one-port file. So no port hides in a model or a
 * service, and a port's name says where it is.
 */
const portsAstray = (files: ReadonlyArray<Pick<ImportGraph.File, "path" | "text">>): ReadonlyArray<string> =>
  files.flatMap((file) => {
    const tags = declaredTags(file.text)
    const name = basename(file.path).replace(/\.tsx?$/, "")
    const home = name.endsWith("Store")
      ? tags.filter((tag) => !tag.endsWith("Store"))
      : tags.length === 1 && tags[0] === name
        ? []
        : tags.filter((tag) => !notPorts.has(`${file.path}: ${tag}`))
    return home.map((tag) => `${file.path}: ${tag}`)
  })

/**
 * Tags of core that are no port: `Work.Jobs` is the list of jobs core builds itself (`Work.layer`) for the
 * host's scheduler; no store or host implements it.
 */
const notPorts = new Set([`${core}/kernel/Work.ts: Jobs`])

/** Exported classes (services, tags, errors) that share a name across files: one name, one thing. */
const sharedClassNames = (
  files: ReadonlyArray<Pick<ImportGraph.File, "path" | "text">>
): ReadonlyArray<string> => {
  const byName = new Map<string, Array<string>>()
  for (const file of files)
    for (const m of file.text.matchAll(/^export\s+(?:abstract\s+)?class\s+(\w+)/gm))
      byName.set(m[1]!, [...(byName.get(m[1]!) ?? []), file.path])
  return [...byName]
    .filter(([, paths]) => paths.length > 1)
    .map(([name, paths]) => `${name}: ${paths.join(", ")}`)
}

describe("core's ports", () => {
  const mine = under(core)

  it("each port is at home: storage ports in a *Store.ts, any other alone in a file of its name", () => {
    expect(declaredTags(mine.map((file) => file.text).join("\n"))).toEqual(
      expect.arrayContaining(["MandatesStore", "MerchantRegistryStore", "Crypto", "Wallet", "Jobs"])
    )
    expect(portsAstray(mine)).toEqual([])
    // The tags excepted are still declared where they are: an exception that no longer applies goes.
    for (const entry of notPorts) {
      const [path, tag] = entry.split(": ")
      expect(declaredTags(mine.find((file) => file.path === path)?.text ?? ""), entry).toContain(tag)
    }
  })

  it("the port rule sees a port in a model, a second port in a one-port file and a service in a *Store.ts", () => {
    const tag = (name: string) => `export class ${name} extends Context.Tag("laari/${name}")<${name}, S>() {}`
    const file = (path: string, ...names: ReadonlyArray<string>) => ({
      path: `${core}/${path}`,
      text: names.map(tag).join("\n")
    })
    expect(
      portsAstray([
        file("directory/Merchant.ts", "MerchantsStore"),
        file("wallet/RemoteLedger.ts", "RemoteLedger", "MovementsStore"),
        file("webhooks/DeliveriesStore.ts", "DeliveriesStore", "Sender")
      ])
    ).toEqual([
      `${core}/directory/Merchant.ts: MerchantsStore`,
      `${core}/wallet/RemoteLedger.ts: RemoteLedger`,
      `${core}/wallet/RemoteLedger.ts: MovementsStore`,
      `${core}/webhooks/DeliveriesStore.ts: Sender`
    ])
    expect(
      portsAstray([
        file("billing/BillingStore.ts", "SubscriptionsStore", "InvoicesStore"),
        file("kernel/Crypto.ts", "Crypto"),
        file("wallet/Balance.ts")
      ])
    ).toEqual([])
  })
})

describe("the packages' names", () => {
  it("no two exported classes share a name", () => {
    const packages = files.filter((file) => /^packages\/\w+\/src\//.test(file.path))
    expect(packages.length).toBeGreaterThan(0)
    expect(sharedClassNames(packages)).toEqual([])
  })

  it("the name rule sees a class exported twice, and lets one name per file through", () => {
    const file = (path: string, text: string) => ({ path, text })
    expect(
      sharedClassNames([
        file("a/Merchants.ts", "export class Merchants extends Effect.Service<Merchants>()"),
        file("a/MerchantsStore.ts", "export class Merchants extends Context.Tag"),
        file("a/Other.ts", "export class Other {}\nclass Merchants {}")
      ])
    ).toEqual(["Merchants: a/Merchants.ts, a/MerchantsStore.ts"])
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

  it("reads no clock, randomness or environment of its own: only through its ports (Clock, WallClock, Crypto)", () => {
    const breaches = mine.flatMap((file) => ambientReads(file.text).map((read) => `${file.path}: ${read}`))
    expect(breaches).toEqual([])
  })

  it("the ambient rule sees the wall clock, a date of now, randomness and the environment, not comments", () => {
    expect(ambientReads("const t = Math.floor(Date.now() / 1000)")).toEqual(["Date.now()"])
    expect(ambientReads("const d = new Date(); const x = Math.random(); const u = process.env.X")).toEqual([
      "new Date()",
      "Math.random()",
      "process.env"
    ])
    expect(ambientReads("// Date.now()\nconst d = new Date(ms)\nconst n = DateTime.now")).toEqual([])
  })
})

/**
 * What in `text` reads the world core is kept from: the system's clock (`Date.now()`, `new Date()`),
 * ambient randomness and the process's environment. Core takes time from Effect's `Clock` (the service's,
 * which may be manual) or the `WallClock` port, randomness from `Crypto`, settings from its callers.
 */
const ambientReads = (text: string): ReadonlyArray<string> => {
  const source = ts.createSourceFile("file.ts", text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const found: Array<string> = []
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const callee = node.expression.getText(source)
      if (["Date.now", "Math.random", "performance.now"].includes(callee)) found.push(`${callee}()`)
    }
    if (ts.isNewExpression(node) && node.expression.getText(source) === "Date" && !node.arguments?.length)
      found.push("new Date()")
    if (ts.isPropertyAccessExpression(node) && node.getText(source) === "process.env")
      found.push("process.env")
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/**
 * What talks to the database: `@effect/sql` and its PostgreSQL client, PGlite and node-postgres. Outside
 * `Sql/` only the failures may be named, in types (`import type`): they run nothing, and a root such as
 * `laari migrate` names them in its signature.
 */
const sqlModule = /^(?:@effect\/sql(?:-[\w-]+)?|@electric-sql\/pglite|pg|pg-[\w-]+)(?:\/.*)?$/
const sqlFailures = new Set(["@effect/sql/SqlError", "@effect/sql/Migrator"])

/** Each import and re-export of `text` by module: whether every one of them is for types only. */
const typeOnlyImports = (text: string): ReadonlyMap<string, boolean> => {
  const found = new Map<string, boolean>()
  const note = (specifier: ts.Expression | undefined, typeOnly: boolean) => {
    if (specifier === undefined || !ts.isStringLiteral(specifier)) return
    found.set(specifier.text, (found.get(specifier.text) ?? true) && typeOnly)
  }
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause
      const named = clause?.namedBindings
      const allTypes =
        clause !== undefined &&
        clause.name === undefined &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((element) => element.isTypeOnly)
      note(node.moduleSpecifier, clause?.isTypeOnly === true || allTypes)
    } else if (ts.isExportDeclaration(node)) note(node.moduleSpecifier, node.isTypeOnly)
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      note(node.arguments[0], false)
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile("file.ts", text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TSX))
  return found
}

/** The SQL modules a server file outside `Sql/` imports, but the failures imported for types. */
const sqlClientOutsideSql = (
  file: Pick<ImportGraph.File, "path" | "text" | "external">
): ReadonlyArray<string> => {
  if (file.path.startsWith(`${server}/Sql/`)) return []
  const named = file.external.filter((specifier) => sqlModule.test(specifier))
  if (named.length === 0) return []
  const typeOnly = typeOnlyImports(file.text)
  return [...new Set(named)].filter(
    (specifier) => !(sqlFailures.has(specifier) && typeOnly.get(specifier) === true)
  )
}

/** The `Context.Tag`s a file declares (a class, or a `GenericTag` constant), by name. */
const declaredTags = (text: string): ReadonlyArray<string> =>
  [
    ...text.matchAll(
      /\bclass\s+(\w+)\s+extends\s+Context\.Tag\(|\bconst\s+(\w+)\s*=\s*Context\.GenericTag\b/g
    )
  ].map((m) => (m[1] ?? m[2])!)

/** Whether `text` builds the service of `tag`: a layer of it, or a context that holds it. */
const builds = (text: string, tag: string): boolean =>
  new RegExp(
    String.raw`\b(?:Layer\.(?:succeed|sync|effect|scoped)|Context\.(?:make|add))\(\s*(?:[\w$]+\.)?${tag}\s*,`
  ).test(text)

/**
 * Ports away from their home. A tag declared in `Platform/` is a port, built where its store is; any
 * other is a service of its own file (a feature's, or what a request or an endpoint carries), built
 * there if anywhere. A tag that a file importing it builds as well has implementations apart from its
 * declaration: it is a port, and belongs in `Platform/`. Under `Sql/`, the drivers' and the adapters'
 * own (the sessions the drivers lend, the SQL client's listeners) may be built anywhere under `Sql/`,
 * never outside it.
 */
const portsAway = (
  files: ReadonlyArray<Pick<ImportGraph.File, "path" | "text" | "local">>
): ReadonlyArray<string> =>
  files.flatMap((file) => {
    if (file.path.startsWith(`${server}/Platform/`)) return []
    const inSql = file.path.startsWith(`${server}/Sql/`)
    return declaredTags(file.text).flatMap((tag) =>
      files
        .filter((other) => other.path !== file.path && other.local.includes(file.path))
        .filter((other) => !(inSql && other.path.startsWith(`${server}/Sql/`)))
        .filter((other) => builds(other.text, tag))
        .map((other) => `${file.path}: ${tag}, built in ${other.path}`)
    )
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
    expect(seen("const m = yield* Store.MerchantsStore")).toEqual(["Store.MerchantsStore"])
    expect(seen("const tx = yield* Store.Transactor")).toEqual(["Store.Transactor"])
    expect(seen("yield* Notifications.Notifications")).toEqual(["Notifications.Notifications"])
    expect(seen("yield* Store.IdempotencyStore")).toEqual(["Store.IdempotencyStore"])
    expect(seen("yield* SqlClient.SqlClient")).toEqual(["SqlClient"])
    expect(seen("", [`${server}/Sql/Mandates.ts`])).toEqual([`${server}/Sql/Mandates.ts`])
    expect(seen("yield* Reads.Reads; yield* Mandates.Mandates; Idempotency.KeyReused")).toEqual([])
    expect(seen("(n: Notifications.Notification) => n.id")).toEqual([])
  })

  it("no SQL client outside Sql/: no other file imports @effect/sql, PGlite or pg, but failures' types", () => {
    expect(mine.flatMap((file) => sqlClientOutsideSql(file).map((what) => `${file.path}: ${what}`))).toEqual(
      []
    )
  })

  it("the SQL client rule sees the client, the drivers and a value import of a failure, and lets types through", () => {
    const seen = (path: string, text: string) =>
      sqlClientOutsideSql({
        path: `${server}/${path}`,
        text,
        external: ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName)
      })
    expect(seen("Health/Http.ts", `import * as SqlClient from "@effect/sql/SqlClient"`)).toEqual([
      "@effect/sql/SqlClient"
    ])
    expect(
      seen("Background/Workers.ts", `import pg from "pg"\nimport { PGlite } from "@electric-sql/pglite"`)
    ).toEqual(["pg", "@electric-sql/pglite"])
    expect(seen("Observability/Metrics.ts", `import * as PgClient from "@effect/sql-pg/PgClient"`)).toEqual([
      "@effect/sql-pg/PgClient"
    ])
    expect(seen("Migrate.ts", `import { SqlError } from "@effect/sql/SqlError"`)).toEqual([
      "@effect/sql/SqlError"
    ])
    expect(seen("Migrate.ts", `const m = await import("@effect/sql/Migrator")`)).toEqual([
      "@effect/sql/Migrator"
    ])
    expect(
      seen(
        "Migrate.ts",
        `import type { SqlError } from "@effect/sql/SqlError"\nimport { type MigrationError } from "@effect/sql/Migrator"`
      )
    ).toEqual([])
    expect(seen("Sql/Mandates.ts", `import * as SqlClient from "@effect/sql/SqlClient"`)).toEqual([])
    expect(seen("WalletConnector/Ledger.ts", `import * as SqlClient from "@effect/sql/SqlClient"`)).toEqual([
      "@effect/sql/SqlClient"
    ])
  })

  it("no port outside its home: a tag built apart from its declaration is in Platform/", () => {
    expect(declaredTags(mine.map((file) => file.text).join("\n"))).toEqual(
      expect.arrayContaining(["RateLimits", "PoolStats", "Clockwork", "BatchSessions", "PgliteClient"])
    )
    expect(portsAway(mine)).toEqual([])
  })

  it("the port rule sees a port built elsewhere, and lets a file's own service and Sql/'s through", () => {
    const file = (path: string, text: string, local: ReadonlyArray<string> = []) => ({
      path: `${server}/${path}`,
      text,
      local: local.map((target) => `${server}/${target}`)
    })
    const port = `export class RateLimits extends Context.Tag("laari/server/RateLimits")<RateLimits, Service>() {}`
    const shared = `export const layer = Layer.effect(\n  RateLimit.RateLimits,\n  make)`
    expect(
      portsAway([file("Http/RateLimit.ts", port), file("Sql/RateBuckets.ts", shared, ["Http/RateLimit.ts"])])
    ).toEqual([`${server}/Http/RateLimit.ts: RateLimits, built in ${server}/Sql/RateBuckets.ts`])
    const lent = `export const PgliteClient = Context.GenericTag<PgliteClient>("laari/PgliteClient")`
    const provided = `Context.make(PgliteClient.PgliteClient, client)`
    expect(
      portsAway([
        file("Sql/Pglite/PgliteClient.ts", lent),
        file("Cli/Commands.ts", provided, ["Sql/Pglite/PgliteClient.ts"])
      ])
    ).toEqual([`${server}/Sql/Pglite/PgliteClient.ts: PgliteClient, built in ${server}/Cli/Commands.ts`])
    const own = `export class Clockwork extends Context.Tag("laari/server/Clockwork")<Clockwork, S>() {}\nexport const layer = Layer.succeed(Clockwork, s)`
    const uses = `const clock = yield* Clockwork.Clockwork\nEffect.provideService(Clockwork.Clockwork, clock)`
    expect(
      portsAway([
        file("Background/Clockwork.ts", own),
        file("Ops/Http.ts", uses, ["Background/Clockwork.ts"])
      ])
    ).toEqual([])
    const sessions = `export class BatchSessions extends Context.Tag("laari/server/BatchSessions")<BatchSessions, S>() {}`
    const driver = `Layer.succeed(PgBatch.BatchSessions, sessions(pool))`
    expect(
      portsAway([
        file("Sql/Pg/PgBatch.ts", sessions),
        file("Sql/Pg/PgPool.ts", driver, ["Sql/Pg/PgBatch.ts"])
      ])
    ).toEqual([])
    expect(
      portsAway([
        file("Platform/PoolStats.ts", port),
        file("Sql/Pg/PgPool.ts", shared, ["Platform/PoolStats.ts"])
      ])
    ).toEqual([])
  })
})

/**
 * Where a server test goes: in the folder of `test/` named as the `src/` folder of what it tests
 * (`Sql/SqlLedger.test.ts` for `src/Sql/Ledger.ts`), or in `Project/` when it checks the whole project
 * (this file, the README, the start-up, the composed server). None at `test/`'s top level, so a feature's
 * tests are where its code is. `quickstart/` is a step of its own (`pnpm test:quickstart`); `support/`
 * holds helpers, no test.
 */
const testsAstray = (paths: ReadonlyArray<string>, srcFolders: ReadonlySet<string>): ReadonlyArray<string> =>
  paths.filter((path) => {
    if (!/\.test\.tsx?$/.test(path)) return false
    const folder = dirname(path)
    return !srcFolders.has(folder) && folder !== "Project" && folder !== "quickstart"
  })

describe("the server's tests", () => {
  it("each is in the folder of its src folder's name, or in Project/, and the rule sees one that is not", () => {
    const srcFolders = new Set(under(server).map((file) => folderOf(server, file.path)))
    srcFolders.delete(".")
    const tests = readdirSync(join(ImportGraph.root, "packages/server/test"), {
      recursive: true,
      encoding: "utf8"
    })
    expect(tests.filter((path) => /\.test\.tsx?$/.test(path)).length).toBeGreaterThan(100)
    expect(testsAstray(tests, srcFolders)).toEqual([])
    expect(
      testsAstray(
        [
          "Edge.test.ts",
          "Http/Edge.test.ts",
          "Sql/Pg/HostList.test.ts",
          "Project/Layout.test.ts",
          "quickstart/QuickStart.test.ts",
          "Mandate/Mandates.http.test.ts",
          "support/Suite.test.ts",
          "support/Fixtures.ts"
        ],
        new Set(["Http", "Mandates", "Sql", "Sql/Pg"])
      )
    ).toEqual(["Edge.test.ts", "Mandate/Mandates.http.test.ts", "support/Suite.test.ts"])
  })
})

describe("file size", () => {
  it("no source file is over 500 lines", () => {
    const long = files.filter((file) => file.lines > 500).map((file) => `${file.path}: ${file.lines}`)
    expect(long).toEqual([])
  })

  it("no test file under packages/*/test is over 800 lines, and the rule sees one that is", () => {
    const longTests = (files: ReadonlyArray<Pick<ImportGraph.File, "path" | "lines">>) =>
      files
        .filter((file) => /\.test\.tsx?$/.test(file.path) && file.lines > 800)
        .map((file) => `${file.path}: ${file.lines}`)
    const packages = join(ImportGraph.root, "packages")
    const tests = readdirSync(packages).flatMap((name) => {
      const dir = join(packages, name, "test")
      if (!existsSync(dir)) return []
      return readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((path) => /\.test\.tsx?$/.test(path))
        .map((path) => ({
          path: `packages/${name}/test/${path}`,
          lines: readFileSync(join(dir, path), "utf8").split("\n").length
        }))
    })
    expect(tests.length).toBeGreaterThan(100)
    expect(longTests(tests)).toEqual([])
    // Support modules are not test files; a test file of 801 lines is a breach, one of 800 is not.
    expect(
      longTests([
        { path: "packages/server/test/Http/Big.test.ts", lines: 801 },
        { path: "packages/server/test/Http/Edge.test.tsx", lines: 800 },
        { path: "packages/server/test/support/Suite.ts", lines: 1_600 }
      ])
    ).toEqual(["packages/server/test/Http/Big.test.ts: 801"])
  })
})
