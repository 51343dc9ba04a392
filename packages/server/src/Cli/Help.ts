/**
 * What `laari --help` and a mistyped command print, within 100 columns: @effect/cli's own overview puts
 * every command's full usage and its description on one line (over 400 columns here). The overview is
 * read from the command tree itself, so a command added there is listed without anything else to edit.
 */
import { type Command, CommandDescriptor, HelpDoc, Usage } from "@effect/cli"

export const Width = 100

// @effect/cli exposes no walk over the tree: its descriptors are plain tagged objects (Standard,
// Subcommands, Map), read here structurally.
type Descriptor =
  | { readonly _tag: "Standard"; readonly name: string; readonly description: HelpDoc.HelpDoc }
  | {
      readonly _tag: "Subcommands"
      readonly parent: Descriptor
      readonly children: ReadonlyArray<Descriptor>
    }
  | { readonly _tag: "Map"; readonly command: Descriptor }
  | { readonly _tag: string }

interface Entry {
  readonly path: ReadonlyArray<string>
  readonly description: string
  readonly descriptor: CommandDescriptor.Command<unknown>
}

const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")
const plain = (doc: HelpDoc.HelpDoc) => HelpDoc.toAnsiText(doc).replace(ansi, "").trim()

const own = (d: Descriptor): { readonly name: string; readonly description: HelpDoc.HelpDoc } | undefined =>
  d._tag === "Standard"
    ? (d as Extract<Descriptor, { _tag: "Standard" }>)
    : d._tag === "Map"
      ? own((d as Extract<Descriptor, { _tag: "Map" }>).command)
      : d._tag === "Subcommands"
        ? own((d as Extract<Descriptor, { _tag: "Subcommands" }>).parent)
        : undefined

/** Every command under `d` (`d` itself first), with its path of names below the root. */
const entries = (d: Descriptor, path: ReadonlyArray<string>): ReadonlyArray<Entry> => {
  const self = own(d)
  const here: ReadonlyArray<Entry> =
    self === undefined || path.length === 0
      ? []
      : [
          {
            path,
            description: plain(self.description),
            descriptor: d as unknown as CommandDescriptor.Command<unknown>
          }
        ]
  const children =
    d._tag === "Map"
      ? [(d as Extract<Descriptor, { _tag: "Map" }>).command]
      : d._tag === "Subcommands"
        ? (d as Extract<Descriptor, { _tag: "Subcommands" }>).children
        : []
  if (d._tag === "Map") return entries(children[0]!, path)
  return [
    ...here,
    ...children.flatMap((c) => {
      const name = own(c)?.name
      return name === undefined ? [] : entries(c, [...path, name])
    })
  ]
}

/** `text` in lines of at most `width` columns, the first after `first`, the rest after `indent`. */
export const wrap = (text: string, width: number, first: string, indent: string): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = first
  let empty = true
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line)
      line = indent
      empty = true
    }
    line = empty ? `${line}${word}` : `${line} ${word}`
    empty = false
  }
  lines.push(line)
  return lines
}

const isLeaf = (e: Entry, all: ReadonlyArray<Entry>) =>
  !all.some((o) => o.path.length > e.path.length && e.path.every((p, i) => o.path[i] === p))

/** The names of a command that has subcommands (`keys`), when `args` are exactly those names. */
export const group = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  args: ReadonlyArray<string>
): ReadonlyArray<string> | undefined => {
  const all = entries(root.descriptor as unknown as Descriptor, [])
  const found = all.find((e) => e.path.length === args.length && e.path.every((p, i) => args[i] === p))
  return found === undefined || isLeaf(found, all) ? undefined : found.path
}

/** The overview `laari --help` prints; under `prefix`, only the commands of that group. */
export const overview = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  about: { readonly name: string; readonly version: string },
  prefix: ReadonlyArray<string> = []
): string => {
  const descriptor = root.descriptor as unknown as Descriptor
  const all = entries(descriptor, []).filter((e) => prefix.every((p, i) => e.path[i] === p))
  const leaves = all.filter((e) => isLeaf(e, all))
  const column = Math.max(...leaves.map((e) => e.path.join(" ").length)) + 4
  const lines = [
    `${about.name} ${about.version}: ${plain(own(descriptor)!.description)}`,
    "",
    `Usage: ${[about.name, ...prefix].join(" ")} <command> [options]`,
    `       ${[about.name, ...prefix].join(" ")} <command> --help    shows a command's options and arguments`,
    "",
    "Commands:",
    ...leaves.flatMap((e) =>
      wrap(e.description, Width, `  ${e.path.join(" ").padEnd(column - 2)}`, " ".repeat(column))
    ),
    "",
    ...wrap(
      `Options of every command: --help, --version, --log-level <level>, --completions sh|bash|fish|zsh, --wizard.`,
      Width,
      "",
      ""
    )
  ]
  return lines.join("\n")
}

/** The usage of the command `args` name (as deep as they match), within `Width` columns. */
export const usage = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  name: string,
  args: ReadonlyArray<string>
): string => {
  const all = entries(root.descriptor as unknown as Descriptor, [])
  let found: Entry | undefined
  for (const e of all)
    if (e.path.every((p, i) => args[i] === p) && (found === undefined || e.path.length > found.path.length))
      found = e
  if (found === undefined) return `Usage: ${name} <command> [options] (${name} --help lists the commands)`
  const text = plain(Usage.getHelp(CommandDescriptor.getUsage(found.descriptor)))
  // Its usage starts with its own name; the path before it is the parents'.
  const full = [name, ...found.path.slice(0, -1), text].join(" ")
  return [
    ...wrap(full, Width, "Usage: ", "         "),
    `(${[name, ...found.path].join(" ")} --help says more)`
  ].join("\n")
}
