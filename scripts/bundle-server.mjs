/**
 * The service as one bundle (esbuild), which `pnpm start` runs (packages/server/dist/bin.js picks it):
 * dist's server imports ~1,000 ES modules, and each one loaded is code and metadata the idle process
 * keeps. One tree-shaken file holds less and starts sooner: less idle RSS, a faster restart to ready.
 *
 * - The input is the compiled `dist` (run after `tsc -b`, by scripts/ensure-built.mjs), so the bundle
 *   runs exactly what tsc emitted; what the server loads on use (GraphQL's engine, the docs page,
 *   tracing, QR codes) stays a chunk loaded on use.
 * - Left to node, unbundled: PGlite (it reads its WebAssembly and data files beside its own module), pg
 *   (an optional native binding) and graphql with the libraries that import it: graphql must be one
 *   module, and node loads one (its CommonJS build) for laari and those libraries alike, where a bundle
 *   could hold its ES build beside the CommonJS one ("Cannot use GraphQLSchema from another module or
 *   realm").
 * - No library may be in the bundle twice (two versions, or its ES and CommonJS builds): checked here.
 * - The files go to packages/server/build, beside `dist`: `OpsToken` finds the repository three folders
 *   above its file, and `Fonts` resolves the font package from there, which hold as in dist.
 *
 *   node scripts/bundle-server.mjs
 */
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { bundle, outdir } from "./bundle-cli.mjs"

const root = Path.resolve(fileURLToPath(import.meta.url), "../..")

export const entry = Path.join(outdir, "laari-server.js")

export const external = [
  "@electric-sql/pglite",
  "@electric-sql/pglite/*",
  "pg",
  "pg-native",
  "graphql",
  "graphql-*",
  // Password hashing is a native addon (a `.node` file per platform), loaded by its package at run time.
  "@node-rs/argon2"
]

/**
 * Libraries that are both imported (as ES modules) and required (by CommonJS packages: prom-client and
 * OpenTelemetry's SDK require the api that @effect/opentelemetry imports): their `require`s resolve to
 * the ES build too, so the bundle holds one. Each exports names only, so the required module is the same.
 */
const oneBuild = ["@opentelemetry/api", "@opentelemetry/semantic-conventions"]

const requiredAsImported = {
  name: "laari-one-build",
  setup(build) {
    const filter = new RegExp(`^(${oneBuild.map((name) => name.replace(/[/.]/g, "\\$&")).join("|")})$`)
    build.onResolve({ filter }, (args) =>
      args.kind === "require-call" && args.pluginData !== "laari-one-build"
        ? build.resolve(args.path, {
            kind: "import-statement",
            resolveDir: args.resolveDir,
            pluginData: "laari-one-build"
          })
        : undefined
    )
  }
}

/**
 * The libraries of a metafile's inputs whose code is in it twice: more than one build of one package
 * (`esm`/`cjs`, `.mjs`/`.js` of one file). Two versions of a package, which the lockfile resolves for
 * different dependants (OpenTelemetry's core today, in the chunk loaded when tracing is on), are two
 * libraries, as they are in dist.
 */
export const duplicates = (metafile) => {
  const packages = new Map()
  for (const input of Object.keys(metafile.inputs)) {
    const at = input.lastIndexOf("node_modules/")
    if (at < 0) continue
    const rest = input.slice(at + "node_modules/".length).split("/")
    const length = rest[0].startsWith("@") ? 2 : 1
    const folder = input.slice(0, at) + rest.slice(0, length).join("/")
    const file = rest.slice(length).join("/")
    // One name for a file's builds: "dist/esm/x.js" and "dist/cjs/x.js", "x.mjs" and "x.cjs".
    const build = file.replace(/(^|\/)(esm|cjs|es|mjs|module)(\/|$)/g, "$1$3").replace(/\.(mjs|cjs)$/, ".js")
    const files = packages.get(folder) ?? new Map()
    files.set(build, [...(files.get(build) ?? []), file])
    packages.set(folder, files)
  }
  const found = []
  for (const [folder, files] of packages)
    for (const variants of files.values())
      if (variants.length > 1) found.push(`${folder}: ${variants.join(", ")}`)
  return found
}

export const bundleServer = async () => {
  const metafile = await bundle({
    name: "laari-server",
    entry: Path.join(root, "packages/server/dist/main.js"),
    external,
    plugins: [requiredAsImported]
  })
  const found = duplicates(metafile)
  if (found.length > 0) throw new Error(`a library is in the server's bundle twice:\n${found.join("\n")}`)
}

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await bundleServer()
