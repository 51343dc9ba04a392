/**
 * Every code block of the README and of the pages under docs/ holds: each TypeScript block type-checks in
 * strict mode against the workspace packages as a host imports them (`@laari/core`, `@laari/testkit`,
 * `@laari/server`, through their `exports` to the compiled declarations, module NodeNext), and runs under
 * plain node unless it says why not (`<!-- not-run: ... -->`: a function a host calls, say); each JSON
 * block parses; no block is JavaScript (written as TypeScript, it is checked); and each shell block is
 * one the quick-start test runs (`<!-- quickstart:NAME -->`) or says why not. The shell blocks themselves
 * run in `pnpm test:quickstart`, which needs a fresh clone.
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { beforeAll, describe, expect, it } from "vitest"
import * as Readme from "../quickstart/Readme.js"

const root = Path.resolve(fileURLToPath(import.meta.url), "../../../../..")
const server = Path.join(root, "packages/server")
const all = Readme.pages(root)
const where = (b: Readme.Block) => `${b.file}:${b.line}`
const typescript = all.filter((b) => b.lang === "ts" || b.lang === "typescript")

/** Where a block's program is, for the compiler: inside @laari/server, so its packages resolve as installed. */
const virtualPath = (b: Readme.Block) =>
  Path.join(server, "test", "snippets", `${b.file.replace(/[/.]/g, "-")}-${b.line}.ts`)

/** The compiler's complaints about each block, as `file:line: message` at the page's own line. */
const typeErrors = (blocks: ReadonlyArray<Readme.Block>): ReadonlyArray<string> => {
  const sources = new Map(blocks.map((b) => [virtualPath(b), b] as const))
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    types: ["node"],
    // The packages' declarations are checked by `pnpm typecheck` and pack-check; here, the blocks.
    skipLibCheck: true
  }
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.fileExists = (f) => sources.has(f) || fileExists(f)
  host.readFile = (f) => sources.get(f)?.text ?? readFile(f)
  host.getSourceFile = (f, language, ...rest) => {
    const b = sources.get(f)
    return b !== undefined
      ? ts.createSourceFile(f, b.text, language, true)
      : getSourceFile(f, language, ...rest)
  }
  const program = ts.createProgram([...sources.keys()], options, host)
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n")
    const b = d.file === undefined ? undefined : sources.get(d.file.fileName)
    if (b === undefined || d.file === undefined || d.start === undefined)
      return `${d.file?.fileName ?? "(global)"}: ${message}`
    const { line } = d.file.getLineAndCharacterOfPosition(d.start)
    return `${b.file}:${b.line + 1 + line}: ${message}`
  })
}

/** Runs a block as a host's program: compiled to JavaScript and fed to plain node, in @laari/server. */
const run = (b: Readme.Block) => {
  const js = ts.transpileModule(b.text, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
  }).outputText
  return spawnSync(process.execPath, ["--input-type=module"], {
    cwd: server,
    input: js,
    encoding: "utf8",
    timeout: 60_000
  })
}

/**
 * The server project's global setup builds what `pnpm start` runs (core and server), not the testkit that
 * the embedding snippet imports: a fresh clone has no `packages/testkit/dist` until this builds it
 * (incrementally, so a second run is quick).
 */
const buildTestkit = () => {
  const tsc = Path.join(root, "node_modules/typescript/bin/tsc")
  const built = spawnSync(process.execPath, [tsc, "-b", "packages/testkit/tsconfig.build.json"], {
    cwd: root,
    encoding: "utf8",
    timeout: 240_000
  })
  if (built.status !== 0) throw new Error(`tsc -b packages/testkit failed:\n${built.stdout}${built.stderr}`)
}

describe("the code blocks of the README and docs/", () => {
  beforeAll(buildTestkit, 240_000)

  it("finds the pages' TypeScript blocks (the embedding snippet among them)", () => {
    expect(typescript.map((b) => b.file)).toContain("docs/embedding.md")
  })

  it("every TypeScript block type-checks in strict mode against the packages as a host imports them", () => {
    expect(typeErrors(typescript)).toEqual([])
  })

  it.each(typescript.filter((b) => b.notes["not-run"] === undefined).map((b) => [where(b), b] as const))(
    "%s runs under plain node",
    (_, b) => {
      const ran = run(b)
      expect(ran.status, `${where(b)} exited ${ran.status}\n${ran.stdout}\n${ran.stderr}`).toBe(0)
      // The embedding snippet prints the charge it made.
      if (b.file === "docs/embedding.md") expect(ran.stdout).toContain("netAmount")
    }
  )

  it("every JSON block parses", () => {
    for (const b of all.filter((b) => b.lang === "json"))
      expect(() => JSON.parse(b.text), `${where(b)} is not JSON`).not.toThrow()
  })

  it("no block is JavaScript: written as TypeScript, it is type-checked", () => {
    expect(all.filter((b) => b.lang === "js" || b.lang === "javascript").map(where)).toEqual([])
  })

  it("every shell block is run by the quick-start test or says why not", () => {
    const quickStart = readFileSync(Path.join(server, "test/quickstart/QuickStart.test.ts"), "utf8")
    // The quick-start test names each block it runs (and checks that it ran every one it did not skip).
    const runs = (name: string) => quickStart.includes(`"${name}"`)
    const missed = all
      .filter((b) => b.lang === "sh" && b.notes["not-run"] === undefined)
      .filter((b) => b.name === undefined || !runs(b.name))
      .map(where)
    expect(
      missed,
      "mark each with <!-- quickstart:NAME --> and run it there, or <!-- not-run: why -->"
    ).toEqual([])
  })

  it("no shell command names a port: they read $PORT (or $LAARI), which the reader sets once", () => {
    const literal = all
      .filter((b) => b.lang === "sh")
      .flatMap((b) => Readme.commands(b.text).map((c) => `${where(b)}: ${c.text}`))
      .filter((c) => /localhost:4000\b/.test(c))
    expect(literal).toEqual([])
  })
})
