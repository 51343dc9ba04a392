/**
 * The `laari` CLI as one bundle (esbuild), which `pnpm laari` runs (packages/server/dist/Cli/laari.js
 * picks it): the compiled CLI imports ~750 ES modules (effect, @effect/cli, @effect/platform, and
 * fast-check through effect's Schema), and loading them (resolving, reading, compiling each file) was
 * ~85% of `laari --help`'s CPU. One tree-shaken file loads in a fraction of that.
 *
 * - The input is the compiled `dist` (run after `tsc -b`), so the bundle runs exactly what tsc emitted.
 * - What a command loads on use stays a chunk loaded on use (`--splitting`): the API's definition and
 *   its client are read by the commands that call the service, not by `--help`.
 * - `serve` and `migrate` are not in the bundle: the launcher runs them from `dist` (the server and the
 *   database drivers, one copy of effect); here their imports are stubs that say so if ever reached.
 * - The files go to packages/server/build, beside `dist`: `OpsToken` finds the repository three folders
 *   above its file, which holds there as in dist.
 *
 *   node scripts/bundle-cli.mjs
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(fileURLToPath(import.meta.url), "../..")

/** Where the bundle goes, and its entry. */
export const outdir = Path.join(root, "packages/server/build")
export const entry = Path.join(outdir, "laari-cli.js")

/** The dynamic imports of `serve` and `migrate` (from dist/Cli/Commands.js), which the bundle leaves out. */
const unbundled = /^\.\.\/(Serve|Migrate)\.js$/

const stubs = {
  name: "laari-unbundled",
  setup(build) {
    build.onResolve({ filter: unbundled }, (args) => ({ path: args.path, namespace: "laari-unbundled" }))
    build.onLoad({ filter: /.*/, namespace: "laari-unbundled" }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not in the CLI's bundle: serve and migrate run from dist (packages/server/dist/Cli/laari.js picks it)`)})`,
      loader: "js"
    }))
  }
}

/**
 * Bundles `entry` (a file of dist) as `name` into `outdir`, its chunks beside it, replacing the previous
 * build's (their names carry a hash of their content). Returns esbuild's metafile.
 */
export const bundle = async ({ name, entry, ...options }) => {
  const esbuild = await import("esbuild")
  mkdirSync(outdir, { recursive: true })
  const prefix = new RegExp(`^${name}(-.*)?\\.js$`)
  for (const file of readdirSync(outdir, { withFileTypes: true }))
    if (file.isFile() && prefix.test(file.name)) rmSync(Path.join(outdir, file.name))
  const result = await esbuild.build({
    entryPoints: { [name]: entry },
    outdir,
    chunkNames: `${name}-[name]-[hash]`,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // A CommonJS dependency's `require` of node's modules, inside an ES module.
    banner: {
      js: 'import { createRequire as __laariRequire } from "node:module"; const require = __laariRequire(import.meta.url);'
    },
    metafile: true,
    logLevel: "warning",
    ...options
  })
  return result.metafile
}

export const bundleCli = () =>
  bundle({ name: "laari-cli", entry: Path.join(root, "packages/server/dist/Cli/main.js"), plugins: [stubs] })

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await bundleCli()
