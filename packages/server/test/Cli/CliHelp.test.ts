/**
 * The `laari` CLI's help and its colours, through the real process (what `pnpm laari` runs), no service
 * needed. The commands are read off `laari --help`, which lists the command tree itself: a command added
 * there is checked here without editing this file. Every command and group's `--help` says what each
 * option and argument is in its own words, and nothing carries ANSI colours where they are not wanted:
 * on a pipe, or with `NO_COLOR` (also on a terminal, through `script`, and with `FORCE_COLOR` set).
 */
import { execFileSync, spawn } from "node:child_process"
import { tmpdir } from "node:os"
import { describe, expect, it } from "vitest"
import * as CliProcess from "../support/CliProcess.js"

const esc = String.fromCharCode(27)

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => CliProcess.run(args, env)

/** The command paths `laari --help` lists (`keys create`), and the groups above them (`keys`). */
const commandTree = async () => {
  const { stdout, code } = await run(["--help"])
  expect(code).toBe(0)
  const listed = stdout.slice(stdout.indexOf("Commands:\n") + "Commands:\n".length).split("\n\n")[0]!
  const commands = listed
    .split("\n")
    .filter((line) => /^ {2}\S/.test(line))
    .map((line) => {
      const [path, description] = line.trim().split(/ {2,}/)
      // Each command says what it does, beside its name.
      expect(description ?? "", `laari ${path} in laari --help`).not.toBe("")
      return path!.split(" ")
    })
  const groups = [...new Set(commands.filter((c) => c.length > 1).map((c) => c.slice(0, -1).join(" ")))]
  return { commands, groups: groups.map((g) => g.split(" ")) }
}

/**
 * The options and arguments a command's help lists, each with the lines under it. A heading is indented
 * two columns (its wrapped rest four), the words about it six.
 */
const parameters = (help: string) => {
  const found: Array<{ heading: string; body: Array<string> }> = []
  let inside = false
  for (const line of help.split("\n")) {
    if (line === "Options:" || line === "Arguments:") inside = true
    else if (line === "") inside = false
    else if (inside && /^ {2}\S/.test(line)) found.push({ heading: line.trim(), body: [] })
    else if (inside && /^ {6}\S/.test(line)) found.at(-1)!.body.push(line.trim())
  }
  return found
}

/** `args` run on a terminal (`script` gives the process one), its output as the terminal shows it. */
const onTerminal = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<string>((resolve) => {
    const command = [process.execPath, CliProcess.entry, ...args].map((a) => `'${a}'`).join(" ")
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd: CliProcess.root,
      env: { ...CliProcess.baseEnv(), ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s))
    child.once("exit", () => resolve(out))
  })

const hasScript = (() => {
  try {
    execFileSync("script", ["-qec", "true", "/dev/null"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

describe("laari CLI help and colours", { timeout: 120_000 }, () => {
  it("every command's --help describes each of its options and arguments in words", async () => {
    const { commands } = await commandTree()
    expect(commands.length).toBeGreaterThanOrEqual(14)
    const missing: Array<string> = []
    for (const path of commands) {
      const { stdout, stderr, code } = await run([...path, "--help"])
      const what = `laari ${path.join(" ")} --help`
      expect({ code, stderr }, what).toEqual({ code: 0, stderr: "" })
      // @effect/cli's stock sentences of a type, said of an option that has no words of its own.
      expect(stdout, what).not.toMatch(/A user-defined piece of text|A true or false value|An integer\./)
      expect(stdout, what).toContain(`Usage: laari ${path.join(" ")}`)
      expect(
        stdout.split("\n").filter((line) => line.length > 100),
        what
      ).toEqual([])
      for (const p of parameters(stdout)) if (p.body.length === 0) missing.push(`${what}: ${p.heading}`)
    }
    expect(missing).toEqual([])
    // `serve` has no options of its own; `keys create` lists each of its own.
    const keys = parameters((await run(["keys", "create", "--help"])).stdout).map((p) => p.heading)
    for (const option of [
      "--url",
      "--ops-token",
      "--json",
      "--merchant",
      "--environment",
      "--kind",
      "--scope"
    ])
      expect(keys.some((h) => h.startsWith(option))).toBe(true)
    const trigger = parameters((await run(["trigger", "--help"])).stdout)
    expect(trigger.some((p) => p.heading.startsWith("<event-type>"))).toBe(true)
  })

  it("no ANSI codes on a pipe: help, every group's overview, errors and output", async () => {
    const { commands, groups } = await commandTree()
    const runs = await Promise.all([
      run(["--help"]),
      run([]),
      ...groups.map((g) => run([...g, "--help"])),
      ...commands.slice(0, 4).map((c) => run([...c, "--help"])),
      // Refused command lines and a refused request: what @effect/cli and the CLI print on stderr.
      run(["keys", "create", "--environmnt", "test"]),
      run(["trigger", "invoice.payed"]),
      run(["nosuch"]),
      run(["merchants", "list", "--url", "http://127.0.0.1:9", "--ops-token", "ops_x"]),
      run(["--version"])
    ])
    for (const r of runs) {
      expect(r.stdout + r.stderr).not.toContain(`${esc}[`)
      expect(r.stdout + r.stderr).not.toBe("")
    }
  })

  it("FORCE_COLOR colours the help on a pipe; NO_COLOR wins over it", async () => {
    const forced = await run(["keys", "create", "--help"], { FORCE_COLOR: "1" })
    expect(forced.stdout).toContain(`${esc}[`)
    const both = await run(["keys", "create", "--help"], { FORCE_COLOR: "1", NO_COLOR: "1" })
    expect(both.stdout).not.toContain(`${esc}[`)
    // Without the codes, the same text.
    expect(both.stdout).toBe(forced.stdout.replaceAll(new RegExp(`${esc}\\[[0-9;]*m`, "g"), ""))
    // @effect/cli's own messages are plain under NO_COLOR too.
    const error = await run(["keys", "create", "--kind", "neither"], { FORCE_COLOR: "1", NO_COLOR: "1" })
    expect(error.code).toBe(1)
    expect(error.stderr).not.toContain(`${esc}[`)
  })

  it.runIf(hasScript)("on a terminal: colours, none with NO_COLOR", async () => {
    expect(await onTerminal(["keys", "create", "--help"], {})).toContain(`${esc}[`)
    for (const args of [["keys", "create", "--help"], ["--help"], ["keys", "create", "--environmnt", "x"]]) {
      const out = await onTerminal(args, { NO_COLOR: "1" })
      expect(out).toContain("laari")
      expect(out, args.join(" ")).not.toContain(`${esc}[`)
    }
    // A failure nothing else explains is reported by Effect's logger, in colour on a terminal: not with
    // NO_COLOR.
    const failing = { PORT: "not-a-port", LAARI_DATA_DIR: tmpdir() }
    expect(await onTerminal(["serve"], failing)).toMatch(new RegExp(`${esc}\\[\\d+mERROR`))
    const report = await onTerminal(["serve"], { ...failing, NO_COLOR: "1" })
    expect(report).toContain('Invalid data at PORT: "Expected an integer value but received "not-a-port""')
    expect(report).not.toContain(`${esc}[`)
  })
})
