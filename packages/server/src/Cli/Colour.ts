/**
 * Whether the CLI's output may carry ANSI colours, per stream: never with `NO_COLOR` (no-color.org, any
 * value but empty), always with `FORCE_COLOR` (but `0` or `false`), else only on a terminal. @effect/cli
 * styles its messages whatever the output is, so the console the CLI runs with takes them out where
 * colours are not wanted: a pipe or a file reads plain text.
 */
import { Console } from "effect"

interface Stream {
  readonly isTTY?: boolean | undefined
}

export const enabled = (stream: Stream, env: Record<string, string | undefined> = process.env): boolean => {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false
  const force = env.FORCE_COLOR
  if (force !== undefined && force !== "") return force !== "0" && force !== "false"
  return stream.isTTY === true
}

// Select Graphic Rendition only (colours, bold): a prompt's cursor movements are left as they are.
const sgr = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")

export const strip = (text: string): string => text.replace(sgr, "")

/** `text` in bold where `on`. */
export const bold = (on: boolean, text: string): string =>
  on ? `${String.fromCharCode(27)}[1m${text}${String.fromCharCode(27)}[0m` : text

const plainArgs = (args: ReadonlyArray<unknown>) => args.map((a) => (typeof a === "string" ? strip(a) : a))

/**
 * `console` writing no colours to a stream where they are not `enabled`: stdout for `log`, `info` and
 * `debug`, stderr for `error`, `warn` and `trace`, as node's console writes them.
 */
export const console = (
  base: Console.Console,
  streams: { readonly stdout: Stream; readonly stderr: Stream } = process,
  env: Record<string, string | undefined> = process.env
): Console.Console => {
  const out = enabled(streams.stdout, env)
  const err = enabled(streams.stderr, env)
  if (out && err) return base
  type Method = "log" | "info" | "debug" | "error" | "warn" | "trace"
  const methods: ReadonlyArray<readonly [Method, boolean]> = [
    ["log", out],
    ["info", out],
    ["debug", out],
    ["error", err],
    ["warn", err],
    ["trace", err]
  ]
  const unsafe = { ...base.unsafe }
  const wrapped: Record<string, unknown> = {}
  for (const [method, on] of methods)
    if (!on) {
      unsafe[method] = (...args: ReadonlyArray<unknown>) => base.unsafe[method](...plainArgs(args))
      wrapped[method] = (...args: ReadonlyArray<unknown>) => base[method](...plainArgs(args))
    }
  return { ...base, ...wrapped, unsafe } as Console.Console
}
