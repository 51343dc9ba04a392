/**
 * `pnpm tsx -C @laari/source packages/server/scripts/openapi-hash.ts`: the sha256 of both OpenAPI documents,
 * byte for byte as the service serves them (`JSON.stringify` of `OpenApi.fromApi`, as `Http/Docs` does), so
 * a refactoring can show that the contract did not change.
 */
import { createHash } from "node:crypto"
import { OpenApi } from "@effect/platform"
import { Api } from "../src/Api.js"
import { OpsDocumentApi } from "../src/Routes.js"

const hash = (doc: unknown) => createHash("sha256").update(JSON.stringify(doc)).digest("hex")

console.log(`/openapi.json      ${hash(OpenApi.fromApi(Api))}`)
console.log(`/ops/openapi.json  ${hash(OpenApi.fromApi(OpsDocumentApi))}`)
