/**
 * Loaded into a server process with `node --import` by `ops.ts`: counts what Effect's runtime does, by
 * patching the fiber runtime's and `@effect/sql`'s prototypes (the same modules the server imports, found
 * from the server's package). SIGUSR1 clears the counts; SIGUSR2 writes them to `$LAARI_OPS_COUNT_FILE`.
 * A diagnostic: never loaded by the service itself.
 */
import { writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"

const server = createRequire(fileURLToPath(new URL("../../packages/server/package.json", import.meta.url)))
/** The ESM build of a package's file, as the server's own imports resolve it. */
const esm = (pkg, file) =>
  pathToFileURL(server.resolve(pkg).replace(/dist\/cjs\/index\.js$/, `dist/esm/${file}`)).href

const fiberRuntime = await import(esm("effect", "internal/fiberRuntime.js"))
const core = await import(esm("effect", "internal/core.js"))
const statement = await import(esm("@effect/sql", "internal/statement.js"))

/** FiberRefs by the name core and the fiber runtime export them under. */
const names = new Map()
for (const module of [core, fiberRuntime])
  for (const [name, value] of Object.entries(module))
    if (value !== null && typeof value === "object" && "initial" in value) names.set(value, name)

const counts = new Map()
const contextKeys = new Map()
const statements = new Map()
const bump = (map, key) => map.set(key, (map.get(key) ?? 0) + 1)

const runtime = fiberRuntime.FiberRuntime.prototype
const setFiberRef = runtime.setFiberRef
runtime.setFiberRef = function (ref, value) {
  bump(counts, `set ${names.get(ref) ?? "(unnamed FiberRef)"}`)
  if (ref === core.currentContext) {
    const before = this.getFiberRef(ref).unsafeMap
    for (const [key, service] of value.unsafeMap)
      if (before.get(key) !== service) bump(contextKeys, String(key))
  }
  return setFiberRef.call(this, ref, value)
}
const start = runtime.start
runtime.start = function (effect) {
  bump(counts, "fiber started")
  return start.call(this, effect)
}
const runLoop = runtime.runLoop
runtime.runLoop = function (effect) {
  bump(counts, "run loop entered")
  return runLoop.call(this, effect)
}
const withConnection = statement.StatementPrimitive.prototype.withConnection
statement.StatementPrimitive.prototype.withConnection = function (operation, f, withoutTransform) {
  bump(statements, this.compile(withoutTransform)[0].replace(/\s+/g, " ").slice(0, 80))
  return withConnection.call(this, operation, f, withoutTransform)
}

const sorted = (map) => Object.fromEntries([...map].sort((a, b) => b[1] - a[1]))
process.on("SIGUSR1", () => {
  for (const map of [counts, contextKeys, statements]) map.clear()
})
process.on("SIGUSR2", () => {
  const file = process.env.LAARI_OPS_COUNT_FILE
  if (file === undefined) return
  writeFileSync(
    file,
    JSON.stringify({
      counts: sorted(counts),
      contextKeys: sorted(contextKeys),
      statements: sorted(statements)
    })
  )
})
