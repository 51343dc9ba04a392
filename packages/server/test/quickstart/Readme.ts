/**
 * The README's shell examples, and those of the pages under docs/, as the quick-start test executes them:
 * fenced ```sh blocks, each named by a `<!-- quickstart:<name> -->` comment on the line before it
 * (invisible to a reader), split into the commands a reader types, with the placeholders replaced by the
 * values the test has learnt. A block no test runs says why in a `<!-- not-run: <why> -->` comment.
 */
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"

export interface Block {
  /** The marker's name; `undefined` for a block without one. */
  readonly name: string | undefined
  readonly lang: string
  readonly text: string
  /** The page it is on, relative to the repository (`README.md`, `docs/cli.md`). */
  readonly file: string
  /** 1-based line of the opening fence, for messages. */
  readonly line: number
  /** The other markers on the lines before it: `<!-- not-run: why -->` is `{ "not-run": "why" }`. */
  readonly notes: Readonly<Record<string, string>>
}

export interface Command {
  /** What a reader types, one command (a line continued with `\` joined, `&&` split). */
  readonly text: string
  /** Ends in `&`: started in the background. */
  readonly background: boolean
}

const marker = /^<!--\s*quickstart:([\w-]+)\s*-->\s*$/
const note = /^<!--\s*([a-z][\w-]*):\s*(.*?)\s*-->\s*$/

/** Every fenced block of `markdown` (the page `file`), with the markers before it. */
export const blocks = (markdown: string, file = "README.md"): ReadonlyArray<Block> => {
  const lines = markdown.split("\n")
  const out: Array<Block> = []
  let pending: string | undefined
  let notes: Record<string, string> = {}
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const named = marker.exec(line)
    if (named !== null) {
      pending = named[1]
      continue
    }
    const noted = note.exec(line)
    if (noted !== null) {
      notes[noted[1]!] = noted[2]!
      continue
    }
    const fence = /^```(\w*)\s*$/.exec(line)
    if (fence === null) {
      // A marker names the block right after it, nothing further down.
      if (line.trim() !== "") {
        pending = undefined
        notes = {}
      }
      continue
    }
    const start = i
    const body: Array<string> = []
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!)
    out.push({ name: pending, lang: fence[1] ?? "", text: body.join("\n"), file, line: start + 1, notes })
    pending = undefined
    notes = {}
  }
  return out
}

/** The pages a newcomer reads, relative to the repository: README.md, then every page under docs/. */
export const pageFiles = (root: string): ReadonlyArray<string> => [
  "README.md",
  ...readdirSync(Path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`)
]

/** Every fenced block of the README and of the pages under docs/, in the repository at `root`. */
export const pages = (root: string): ReadonlyArray<Block> =>
  pageFiles(root).flatMap((file) => blocks(readFileSync(Path.join(root, file), "utf8"), file))

/** The block named `name`: exactly one must exist, in `sh`. */
export const block = (all: ReadonlyArray<Block>, name: string): Block => {
  const found = all.filter((b) => b.name === name)
  if (found.length !== 1)
    throw new Error(
      `README.md and docs/: expected one block marked <!-- quickstart:${name} -->, found ${found.length}`
    )
  if (found[0]!.lang !== "sh")
    throw new Error(`${found[0]!.file}: the block quickstart:${name} is not \`\`\`sh`)
  return found[0]!
}

/** The commands of a shell block, in order. */
export const commands = (text: string): ReadonlyArray<Command> =>
  text
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .flatMap((line) => line.split(/\s+&&\s+/))
    .map((command) => {
      const background = /\s&$/.test(command)
      return { text: background ? command.replace(/\s*&$/, "") : command, background }
    })

/** Every `curl` and `pnpm laari` command in the pages' shell blocks: what the test must run. */
export const examples = (all: ReadonlyArray<Block>): ReadonlyArray<string> =>
  all
    // A block that says why it is not run (`<!-- not-run: ... -->`: another party's system, say) is not expected.
    .filter((b) => b.lang === "sh" && b.notes["not-run"] === undefined)
    .flatMap((b) => commands(b.text))
    .map((c) => c.text)
    .filter((c) => /^(curl|pnpm laari)\s/.test(c))

/**
 * `command` with each placeholder replaced; throws when one the test has no value for is left (`<...>`,
 * `sk_test_...`), so a new placeholder in a page fails loudly instead of being sent as is.
 */
export const substitute = (command: string, values: Readonly<Record<string, string>>): string => {
  let out = command
  for (const [placeholder, value] of Object.entries(values)) out = out.replaceAll(placeholder, value)
  const left = /<[a-z][a-z ]*>|\b\w+_\.\.\./.exec(out)
  if (left !== null)
    throw new Error(`README.md or docs/: no value for the placeholder ${left[0]} in: ${command}`)
  return out
}
