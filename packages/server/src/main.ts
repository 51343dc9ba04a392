/**
 * The standalone service, the same as `laari serve` (see `Serve.ts`): what `pnpm start` runs, through
 * `bin.ts` (which runs its bundle when current) or, from the packed package, as it is.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Serve from "./Serve.js"

// The pretty logger runMain adds would write every line a second time, as text.
NodeRuntime.runMain(Serve.run, { disablePrettyLogger: process.env.LAARI_LOG_FORMAT === "json" })
