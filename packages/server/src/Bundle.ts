/**
 * Which build a launcher runs: `bin.ts` (`pnpm start`) and `Cli/laari.ts` (`pnpm laari`) run a bundle
 * that scripts/ensure-built.mjs makes from dist into packages/server/build (one file to load instead of
 * hundreds of modules), unless it is older than the last `tsc -b`: what runs is never older than dist.
 * Nothing here imports effect: choosing costs three `stat`s.
 */
import { statSync } from "node:fs"
import { fileURLToPath } from "node:url"

const at = (relative: string) => fileURLToPath(new URL(relative, import.meta.url))

/** Modification time in ms, or undefined when the file is not there. */
const modified = (file: string): number | undefined => {
  try {
    return statSync(file).mtimeMs
  } catch {
    return undefined
  }
}

/** The path of the bundle `name` (in packages/server/build) when it is there and current, else undefined. */
export const current = (name: string): string | undefined => {
  const bundle = at(`../build/${name}`)
  const made = modified(bundle)
  if (made === undefined) return undefined
  // tsc -b rewrites a project's build info whenever it emits: the server's and core's.
  const built = [at("../build/tsconfig.build.tsbuildinfo"), at("../../core/build/tsconfig.build.tsbuildinfo")]
  return built.map(modified).every((time) => time === undefined || time <= made) ? bundle : undefined
}
