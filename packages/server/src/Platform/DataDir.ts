/**
 * The data directory holds what must stay the user's own: the embedded database (with the pages' key,
 * the code and key hash keys and the webhook secrets) and the operator token. It is made `0700` and its
 * files `0600`, whatever the umask; a directory others can read is refused at start. The directory's mode
 * is what protects the files: PGlite's file system sets `0666` on what it writes, ignoring the umask, so
 * its files are made private again when the database opens and closes (`privatize`).
 */
import { chmodSync, mkdirSync, readdirSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import { Data, Effect } from "effect"

export class DataDirExposed extends Data.TaggedError("DataDirExposed")<{ readonly message: string }> {}

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
