/**
 * The import graph of the workspace's source, read as text with TypeScript's own pre-processor (no type
 * checking, so it takes well under a second): which file imports which, and which folder imports which.
 * `Layout.test.ts` holds the layout's rules against it (no cycle between files or folders, what core and
 * the front ends may import, the size of a file).
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import ts from "typescript"

/** The workspace's root, from this file (packages/server/test/support). */
export const root = resolve(import.meta.dirname, "../../../..")

/** A source file: its path from the workspace's root, its text and lines, and what it imports. */
export interface File {
  readonly path: string
  readonly text: string
  readonly lines: number
  /** Other source files of the same tree it imports, as paths from the root. */
  readonly local: ReadonlyArray<string>
  /**
   * Every other specifier, as written: packages (`effect`, `@laari/core`), `node:*` builtins, and files
   * outside the trees read (`../../scripts/ensure-built.mjs`, another package's test support).
   */
  readonly external: ReadonlyArray<string>
}

const sourceFile = (name: string) => /\.tsx?$/.test(name) && !name.endsWith(".d.ts")

const walk = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : sourceFile(name) ? [path] : []
  })

/** The files a relative specifier can name under NodeNext: `./X.js` is `./X.ts` or `./X.tsx`. */
const candidates = (from: string, specifier: string): ReadonlyArray<string> => {
  const target = resolve(dirname(from), specifier)
  const stem = target.replace(/\.js$/, "")
  return [`${stem}.ts`, `${stem}.tsx`, join(target, "index.ts"), target]
}

/** Every source file below `dirs` (paths from the root), with what it imports. */
export const read = (dirs: ReadonlyArray<string>): ReadonlyArray<File> => {
  const paths = dirs.flatMap((dir) => walk(join(root, dir)))
  const known = new Set(paths)
  return paths.map((path) => {
    const text = readFileSync(path, "utf8")
    const { importedFiles } = ts.preProcessFile(text, true, true)
    const local: Array<string> = []
    const external: Array<string> = []
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith(".")) {
        external.push(fileName)
        continue
      }
      const named = candidates(path, fileName)
      const target = named.find((candidate) => known.has(candidate))
      if (target !== undefined) local.push(relative(root, target))
      else if (named.some((candidate) => existsSync(candidate))) external.push(fileName)
      else throw new Error(`${relative(root, path)}: cannot resolve ${fileName}`)
    }
    return { path: relative(root, path), text, lines: text.split("\n").length, local, external }
  })
}

/** A directed graph: each node and the nodes it points to. */
export type Graph = ReadonlyMap<string, ReadonlySet<string>>

export const fileGraph = (files: ReadonlyArray<File>): Graph =>
  new Map(files.map((file) => [file.path, new Set(file.local)]))

/** Folders as nodes: an edge where a file of one imports a file of another. */
export const folderGraph = (files: ReadonlyArray<File>): Graph => {
  const graph = new Map<string, Set<string>>()
  for (const file of files) {
    const from = dirname(file.path)
    const edges = graph.get(from) ?? new Set<string>()
    graph.set(from, edges)
    for (const target of file.local) if (dirname(target) !== from) edges.add(dirname(target))
  }
  return graph
}

/**
 * The graph's cycles, as its strongly connected components of more than one node, and the nodes that
 * import themselves (Tarjan's algorithm). An acyclic graph has none.
 */
export const cycles = (graph: Graph): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<ReadonlyArray<string>> = []
  let next = 0
  const visit = (node: string): void => {
    index.set(node, next)
    low.set(node, next)
    next++
    stack.push(node)
    onStack.add(node)
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(node, Math.min(low.get(node)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: Array<string> = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}
