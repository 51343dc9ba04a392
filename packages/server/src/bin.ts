/**
 * What `pnpm start` runs: the service's bundle (scripts/bundle-server.mjs, made by
 * scripts/ensure-built.mjs after `tsc -b`) when it is current, else `main.js` from dist (also from the
 * packed package, which ships no bundle). The bundle loads one file instead of ~1,000 modules: less
 * memory held by the idle server and a quicker start. `cluster.fork` (`LAARI_PROCESSES`) re-runs this
 * file, so every process makes the same choice.
 */
import { pathToFileURL } from "node:url"
import * as Bundle from "./Bundle.js"

const bundle = Bundle.current("laari-server.js")

await import(bundle !== undefined ? pathToFileURL(bundle).href : "./main.js")
