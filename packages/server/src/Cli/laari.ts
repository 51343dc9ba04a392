#!/usr/bin/env node
/**
 * What `pnpm laari` runs: the CLI's bundle (scripts/bundle-cli.mjs, made by scripts/ensure-built.mjs
 * beside this build), one file instead of ~750 modules to load, a third of the start-up's CPU. `serve`
 * and `migrate` run `main.js` from dist as before: the server and the database drivers are not in the
 * bundle (they would be a second copy of effect beside it).
 *
 * A bundle older than the last `tsc -b` (a `pnpm build` since) is stale: `main.js` runs then, so what
 * runs is never older than dist (`Bundle.current`).
 */
import { pathToFileURL } from "node:url"
import * as Bundle from "../Bundle.js"

const args = process.argv.slice(2)
const runsTheServer = args.some((a) => a === "serve" || a === "migrate")
const bundle = runsTheServer ? undefined : Bundle.current("laari-cli.js")

await import(bundle !== undefined ? pathToFileURL(bundle).href : "./main.js")
