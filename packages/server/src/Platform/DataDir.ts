/**
 * The data directory holds what must stay the user's own: the embedded database (with the pages' key,
 * the code and key hash keys and the webhook secrets) and the operator token. It is made `0700` and its
 * files `0600`, whatever the umask; a directory others can read is refused at start. The directory's mode
 * is what protects the files: PGlite's file system sets `0666` on what it writes, ignoring the umask, so
 * its files are made private again when the database opens and closes (`privatize`).
 *
 * One process at a time opens the embedded database (`lock`): PGlite takes no lock of its own, and two
 * processes on one directory each keep their own copy of the database in memory and overwrite each
 * other's files.
 */
import { chmodSync, mkdirSync, readdirSync, statSync, unlinkSync } from "node:fs"
import * as Net from "node:net"
import { join, relative, resolve } from "node:path"
import { Data, Effect, type Scope } from "effect"

export class DataDirExposed extends Data.TaggedError("DataDirExposed")<{ readonly message: string }> {}

export class DataDirInUse extends Data.TaggedError("DataDirInUse")<{
  readonly message: string
  /** The holder's process id, when it answered. */
  readonly pid: number | undefined
}> {}

/** Group and other permission bits: none may be set on the data directory. */
const Shared = 0o077

/** The message for a directory whose `mode` lets others in, or `undefined` when it is private. */
export const exposure = (dir: string, mode: number): string | undefined =>
  (mode & Shared) === 0
    ? undefined
    : `the data directory ${dir} can be read by other users (mode ${(mode & 0o777).toString(8)}); ` +
      `make it private with: chmod 700 ${dir}`

/**
 * Creates `dir` private, or checks that an existing one is, and sets the process's umask so every file
 * written from now on (PGlite's among them) is readable by this user only.
 */
export const prepare = (dir: string): Effect.Effect<void, DataDirExposed> =>
  Effect.suspend(() => {
    process.umask(Shared)
    const path = resolve(dir)
    const mode = (() => {
      try {
        return statSync(path).mode
      } catch {
        mkdirSync(path, { recursive: true, mode: 0o700 })
        // mkdir's mode is masked by the umask of the moment; say it outright.
        chmodSync(path, 0o700)
        return 0o700
      }
    })()
    const message = exposure(path, mode)
    return message === undefined ? Effect.void : Effect.fail(new DataDirExposed({ message }))
  })

/** Takes group and other bits off every file and directory under `dir` (best effort: files come and go). */
export const privatize = (dir: string): void => {
  const walk = (path: string) => {
    try {
      const stat = statSync(path)
      if ((stat.mode & Shared) !== 0) chmodSync(path, stat.mode & 0o700)
      if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
    } catch {
      // removed while we walked
    }
  }
  walk(resolve(dir))
}

// ---------------------------------------------------------------------------------------------------------

/** What a holder answers a process that finds the directory taken. */
interface Holder {
  readonly pid: number
  readonly what: string
}

/** The refusal, naming the directory and its holder. */
export const inUse = (dir: string, holder: Holder | undefined): string =>
  `the data directory ${resolve(dir)} is in use by ${holder === undefined ? "another process" : `process ${holder.pid} (${holder.what})`}: ` +
  "stop that one first, or give this one its own directory with LAARI_DATA_DIR=<dir>"

/**
 * The lock's name: a Unix domain socket, which the operating system unbinds when its process ends in any
 * way (SIGKILL and a crash included), so no stale lock is ever left to block a start. On Linux it lives in
 * the abstract namespace (no file), named by the directory's device and inode so that every path to the
 * directory (a symlink, `./.data` and its absolute path) is the same lock; elsewhere it is a socket file
 * in the directory.
 */
export const lockAddress = (dir: string, platform: NodeJS.Platform = process.platform): string => {
  const path = resolve(dir)
  if (platform !== "linux") return join(path, "laari.lock")
  const { dev, ino } = statSync(path, { bigint: true })
  return `\0laari-data-dir:${dev}:${ino}`
}

const listen = (address: string, holder: Holder): Promise<Net.Server> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer((socket) => {
      socket.on("error", () => {})
      socket.end(JSON.stringify(holder))
    })
    server.once("error", reject)
    server.listen(address, () => {
      server.off("error", reject)
      // A failed accept must not end the process; the lock is the bound name, not the connections.
      server.on("error", () => {})
      // The lock alone keeps no process alive.
      server.unref()
      resolve(server)
    })
  })

/** Asks the holder of `address` who it is: `gone` when nothing listens there any more. */
const ask = (
  address: string
): Promise<{ readonly gone: true } | { readonly gone: false; readonly holder?: Holder }> =>
  new Promise((resolve) => {
    let text = ""
    const socket = Net.connect(address)
    socket.setEncoding("utf8")
    // A holder busy in a long synchronous step (a migration) answers late: say no pid rather than wait.
    socket.setTimeout(3_000, () => {
      socket.destroy()
      resolve({ gone: false })
    })
    socket.on("data", (chunk: string) => (text += chunk))
    socket.once("end", () => {
      socket.destroy()
      try {
        const holder = JSON.parse(text) as Holder
        resolve(typeof holder.pid === "number" ? { gone: false, holder } : { gone: false })
      } catch {
        resolve({ gone: false })
      }
    })
    socket.once("error", (e: NodeJS.ErrnoException) =>
      resolve(e.code === "ECONNREFUSED" || e.code === "ENOENT" ? { gone: true } : { gone: false })
    )
  })

/** The locks this process holds, by address: a second open in the same process shares the first's. */
const held = new Map<string, { readonly server: Net.Server; count: number }>()

const take = async (dir: string, what: string): Promise<() => void> => {
  const address = lockAddress(dir)
  const release = () => {
    const entry = held.get(address)
    if (entry === undefined || --entry.count > 0) return
    held.delete(address)
    // Closing a socket file's server also removes the file.
    entry.server.close()
  }
  const mine = held.get(address)
  if (mine !== undefined) {
    mine.count++
    return release
  }
  for (let attempt = 0; ; attempt++) {
    try {
      held.set(address, { server: await listen(address, { pid: process.pid, what }), count: 1 })
      return release
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE") throw e
    }
    const answer = await ask(address)
    if (!answer.gone || attempt >= 5)
      throw new DataDirInUse({
        message: inUse(dir, answer.gone ? undefined : answer.holder),
        pid: answer.gone ? undefined : answer.holder?.pid
      })
    // Bound but not listening: a socket file whose process is gone (removed, then bound again), or a
    // holder between its bind and its listen, or closing.
    if (!address.startsWith("\0"))
      try {
        unlinkSync(address)
      } catch {
        // removed by another starting process
      }
    await new Promise((r) => setTimeout(r, 20 * (attempt + 1)))
  }
}

/** The command line of this process, for a holder that names itself no better. */
const commandLine = () =>
  ["node", ...process.argv.slice(1).map((a, i) => (i === 0 ? relative(process.cwd(), a) || a : a))].join(" ")

/**
 * Holds the data directory `dir` (which must exist) for this process until the scope closes, or fails with
 * `DataDirInUse` naming the process that holds it. `what` is how this process is named to one refused.
 */
export const lock = (
  dir: string,
  what: string = commandLine()
): Effect.Effect<void, DataDirInUse, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({ try: () => take(dir, what), catch: (e) => e }).pipe(
      Effect.catchAll((e) => (e instanceof DataDirInUse ? Effect.fail(e) : Effect.die(e)))
    ),
    (release) => Effect.sync(release)
  ).pipe(Effect.asVoid)
