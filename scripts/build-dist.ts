/**
 * Vitest global setup of the projects that start laari as a process: build the compiled `dist` first
 * (incrementally, as `pnpm start` does, through the same up-to-date check), so those tests run what
 * ships and never a stale build.
 */
import { ensureBuilt, server } from "./ensure-built.mjs"

export const setup = () => {
  ensureBuilt(server)
}
