/**
 * Vitest global setup of the projects that start laari as a process: build the compiled `dist` first
 * (incrementally, as `pnpm start` does), so those tests run what ships and never a stale build.
 */
import { execFileSync } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(fileURLToPath(import.meta.url), "../..")

export const setup = () => {
  execFileSync(
    process.execPath,
    [Path.join(root, "node_modules/typescript/bin/tsc"), "-b", "packages/server/tsconfig.build.json"],
    { cwd: root, stdio: "inherit" }
  )
}
