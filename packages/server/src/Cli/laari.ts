#!/usr/bin/env node
/**
 * What `pnpm laari` runs: the CLI's bundle (scripts/bundle-cli.mjs, made by scripts/ensure-built.mjs
 * beside this build), one file instead of ~750 modules to load, a third of the start-up's CPU. `serve`
 * and `migrate` run `main.js` from dist as before: the server and the database drivers are not in the
 * bundle (they would be a second copy of effect beside it).
 *
 * A bundle older than the last `tsc -b` (a `pnpm build` since) is stale: `main.js` runs then, so what
 * runs is never older than dist. Nothing here imports effect: choosing costs two `stat`s.
 */
import { statSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"

const at = (relative: string) => fileURLToPath(new URL(relative, import.meta.url))

/** Modification time in ms, or undefined when the file is not there. */
const modified = (file: string): number | undefined => {
  try {
    return statSync(file).mtimeMs
  } catch {
    return undefined
  }
}

/** dist/Cli/laari.js: the bundle is packages/server/build/laari-cli.js. */
const bundle = at("../../build/laari-cli.js")

const bundled = (): boolean => {
  const made = modified(bundle)
  if (made === undefined) return false
  // tsc -b rewrites a project's build info whenever it emits: the server's and core's.
  return [at("../../build/tsconfig.build.tsbuildinfo"), at("../../../core/build/tsconfig.build.tsbuildinfo")]
    .map(modified)
    .every((built) => built === undefined || built <= made)
}

const args = process.argv.slice(2)
const runsTheServer = args.some((a) => a === "serve" || a === "migrate")

await import(!runsTheServer && bundled() ? pathToFileURL(bundle).href : "./main.js")
