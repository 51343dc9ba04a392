/**
 * Writes the typed client's types (test/generated/laari-api.d.ts) from the API's OpenAPI document.
 */
import { writeFileSync } from "node:fs"
import { OpenApi } from "@effect/platform"
import { Api } from "../src/Api.js"
import { GeneratedPath, generate } from "../test/support/ClientTypes.js"

writeFileSync(GeneratedPath, await generate(OpenApi.fromApi(Api)))
console.log(`wrote ${GeneratedPath}`)
