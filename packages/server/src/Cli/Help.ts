/**
 * What `laari --help`, `laari <command> --help` and a mistyped command print, within 100 columns:
 * @effect/cli's own overview puts every command's full usage and its description on one line (over 400
 * columns here), and its help of a command opens each option with its type's stock sentence ("A
 * user-defined piece of text."). Both are read from the command tree itself, so a command or an option
 * added there is shown without anything else to edit, with the words its definition gives it.
 */
import { Args, type Command, CommandDescriptor, HelpDoc, Options, Usage } from "@effect/cli"
import { Option } from "effect"
import { bold } from "./Colour.js"

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

export interface Entry {
  readonly path: ReadonlyArray<string>
  readonly description: string
  readonly descriptor: CommandDescriptor.Command<unknown>
}

const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")
const plain = (doc: HelpDoc.HelpDoc) => HelpDoc.toAnsiText(doc).replace(ansi, "").trim()

/** How a heading is styled: bold on a terminal that takes colours, as is elsewhere. */
export interface Style {
  readonly colour: boolean
}

const plainStyle: Style = { colour: false }

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
  prefix: ReadonlyArray<string> = [],
  style: Style = plainStyle
): string => {
  const descriptor = root.descriptor as unknown as Descriptor
  const all = entries(descriptor, []).filter((e) => prefix.every((p, i) => e.path[i] === p))
  const leaves = all.filter((e) => isLeaf(e, all))
  const column = Math.max(...leaves.map((e) => e.path.join(" ").length)) + 4
  const lines = [
    `${about.name} ${about.version}: ${plain(own(descriptor)!.description)}`,
    "",
    `${bold(style.colour, "Usage:")} ${[about.name, ...prefix].join(" ")} <command> [options]`,
    `       ${[about.name, ...prefix].join(" ")} <command> --help    shows a command's options and arguments`,
    "",
    bold(style.colour, "Commands:"),
    ...leaves.flatMap((e) =>
      wrap(e.description, Width, `  ${e.path.join(" ").padEnd(column - 2)}`, " ".repeat(column))
    ),
    "",
    ...builtIns
  ]
  return lines.join("\n")
}

const builtIns = wrap(
  "Options of every command: --help, --version, --log-level <level>, --completions sh|bash|fish|zsh, --wizard.",
  Width,
  "",
  ""
)

/** The deepest command `args` name, from their start. */
const deepest = (all: ReadonlyArray<Entry>, args: ReadonlyArray<string>): Entry | undefined => {
  let found: Entry | undefined
  for (const e of all)
    if (e.path.every((p, i) => args[i] === p) && (found === undefined || e.path.length > found.path.length))
      found = e
  return found
}

/** `found`'s usage, its parents' names before its own, in lines of `Width` columns. */
const usageLines = (name: string, found: Entry, style: Style): ReadonlyArray<string> => {
  const text = plain(Usage.getHelp(CommandDescriptor.getUsage(found.descriptor)))
  // Its usage starts with its own name; the path before it is the parents'.
  const full = [name, ...found.path.slice(0, -1), text].join(" ")
  const lines = wrap(full, Width, "Usage: ", "         ")
  return [`${bold(style.colour, "Usage:")}${lines[0]!.slice("Usage:".length)}`, ...lines.slice(1)]
}

/** The usage of the command `args` name (as deep as they match), within `Width` columns. */
export const usage = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  name: string,
  args: ReadonlyArray<string>
): string => {
  const found = deepest(entries(root.descriptor as unknown as Descriptor, []), args)
  if (found === undefined) return `Usage: ${name} <command> [options] (${name} --help lists the commands)`
  return [
    ...usageLines(name, found, plainStyle),
    `(${[name, ...found.path].join(" ")} --help says more)`
  ].join("\n")
}

// Options and arguments are trees of plain tagged objects too: a `Single` (one option or argument, with
// the description its definition gave it) under wrappers that make it optional, defaulted, read from
// the environment or repeated, and pairs (`Both`) of several.
interface Node {
  readonly _tag: string
  readonly description?: HelpDoc.HelpDoc
  readonly left?: Node
  readonly right?: Node
  readonly options?: Node
  readonly args?: Node
  readonly argumentOption?: Node
  readonly fallback?: unknown
}

/** An option or argument of a command: how it is written, what the wrappers add, and its own words. */
export interface Parameter {
  readonly heading: string
  readonly notes: ReadonlyArray<string>
  readonly description: string
}

const note = (node: Node): string | undefined => {
  switch (node._tag) {
    case "WithDefault":
      // A flag is off unless given: nothing to say.
      return Option.isOption(node.fallback)
        ? "optional"
        : node.fallback === false
          ? undefined
          : `default ${String(node.fallback)}`
    case "WithFallback":
    case "WithFallbackConfig":
      return "or from the environment"
    case "Variadic":
      return "repeatable"
    case "KeyValueMap":
      return "key=value, repeatable"
    default:
      return undefined
  }
}

const parameters = (
  node: Node,
  heading: (single: Node) => string,
  notes: ReadonlyArray<string> = []
): ReadonlyArray<Parameter> => {
  if (node._tag === "Single")
    return [{ heading: heading(node), notes, description: plain(node.description ?? HelpDoc.empty) }]
  if (node.left !== undefined && node.right !== undefined)
    return [...parameters(node.left, heading, notes), ...parameters(node.right, heading, notes)]
  const inner = node.options ?? node.args ?? node.argumentOption
  if (inner === undefined) return []
  const added = note(node)
  return parameters(inner, heading, added === undefined ? notes : [...notes, added])
}

/** The options and the arguments of the command `args` name, when they name one without subcommands. */
export const parametersOf = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  args: ReadonlyArray<string>
):
  | {
      readonly entry: Entry
      readonly options: ReadonlyArray<Parameter>
      readonly args: ReadonlyArray<Parameter>
    }
  | undefined => {
  const all = entries(root.descriptor as unknown as Descriptor, [])
  const found = deepest(all, args)
  if (found === undefined || !isLeaf(found, all)) return undefined
  let standard = found.descriptor as unknown as Node & { readonly command?: Node }
  while (standard._tag === "Map" && standard.command !== undefined) standard = standard.command
  const text = (usage: Usage.Usage) => plain(Usage.getHelp(usage))
  return {
    entry: found,
    options: parameters(standard.options ?? { _tag: "Empty" }, (single) =>
      text(Options.getUsage(single as unknown as Options.Options<unknown>))
    ),
    args: parameters(standard.args ?? { _tag: "Empty" }, (single) =>
      text(Args.getUsage(single as unknown as Args.Args<unknown>))
    )
  }
}

const section = (title: string, list: ReadonlyArray<Parameter>, style: Style): ReadonlyArray<string> =>
  list.length === 0
    ? []
    : [
        "",
        bold(style.colour, title),
        ...list.flatMap((p) => {
          const notes = p.notes.length === 0 ? "" : `  (${p.notes.join("; ")})`
          const [first, ...rest] = wrap(`${p.heading}${notes}`, Width, "  ", "    ")
          return [
            `  ${bold(style.colour, first!.slice(2))}`,
            ...rest,
            ...(p.description === "" ? [] : wrap(p.description, Width, "      ", "      "))
          ]
        })
      ]

/**
 * What `laari <command> --help` prints for a command without subcommands: its description, usage,
 * arguments and options, each with its own description, and the options every command takes.
 */
export const command = <Name extends string, R, E, A>(
  root: Command.Command<Name, R, E, A>,
  name: string,
  args: ReadonlyArray<string>,
  style: Style = plainStyle
): string | undefined => {
  const found = parametersOf(root, args)
  if (found === undefined) return undefined
  return [
    ...wrap(found.entry.description, Width, `${[name, ...found.entry.path].join(" ")}: `, "  "),
    "",
    ...usageLines(name, found.entry, style),
    ...section("Arguments:", found.args, style),
    ...section("Options:", found.options, style),
    "",
    ...builtIns
  ].join("\n")
}
