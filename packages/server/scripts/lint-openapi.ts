/**
 * `pnpm lint:openapi`: writes the OpenAPI documents as the service serves them (the merchants', the
 * operator's and the wallet connector's) (from the code, no server
 * started) and runs Spectral on them with the OpenAPI and OWASP rulesets (`.spectral.yaml`). Fails on any
 * finding whose rule is not accepted, with its reason, in `openapi-accepted-findings.json`, and on an
 * accepted rule that no longer finds anything (the list stays true).
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { OpenApi } from "@effect/platform"
import { Api } from "../src/Api.js"
import { OpsDocumentApi } from "../src/Routes.js"
import { WalletConnectorApi } from "../src/WalletConnector/Api.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "../../..")

/** Each document by the name the accepted findings use. */
const documents = {
  "openapi.json": OpenApi.fromApi(Api),
  "ops-openapi.json": OpenApi.fromApi(OpsDocumentApi),
  "wallet-connector.openapi.json": OpenApi.fromApi(WalletConnectorApi)
}

interface Accepted {
  readonly document: keyof typeof documents
  readonly rule: string
  readonly reason: string
}
interface Finding {
  readonly code: string
  readonly message: string
  readonly path: ReadonlyArray<string | number>
  readonly source: string
}

const accepted: ReadonlyArray<Accepted> = JSON.parse(
  readFileSync(join(root, "openapi-accepted-findings.json"), "utf8")
).accepted

const dir = mkdtempSync(join(tmpdir(), "laari-openapi-"))
try {
  const files = Object.entries(documents).map(([name, document]) => {
    const file = join(dir, name)
    writeFileSync(file, JSON.stringify(document, null, 2))
    return file
  })
  const spectral = join(root, "node_modules/.bin/spectral")
  const args = ["lint", "-q", "-f", "json", "-r", join(root, ".spectral.yaml"), "--fail-severity", "hint"]
  let output: string
  try {
    output = execFileSync(spectral, [...args, ...files], { encoding: "utf8", maxBuffer: 1 << 28 })
  } catch (e) {
    // Spectral exits 1 when it finds anything; its JSON is on stdout all the same.
    output = (e as { stdout?: string }).stdout ?? ""
    if (output.trim() === "") throw e
  }
  const findings: ReadonlyArray<Finding> = output.trim() === "" ? [] : JSON.parse(output)
  const documentOf = (f: Finding) => f.source.split(/[\\/]/).pop()
  const isAccepted = (f: Finding) => accepted.some((a) => a.rule === f.code && a.document === documentOf(f))
  const refused = findings.filter((f) => !isAccepted(f))
  const stale = accepted.filter(
    (a) => !findings.some((f) => f.code === a.rule && documentOf(f) === a.document)
  )
  for (const f of refused) console.error(`${documentOf(f)} ${f.code} at ${f.path.join(".")}: ${f.message}`)
  for (const a of stale) console.error(`accepted but not found any more, remove it: ${a.document} ${a.rule}`)
  console.log(
    `spectral: ${findings.length} findings in ${files.length} documents, ${findings.length - refused.length} accepted (${accepted.length} rules), ${refused.length} not accepted`
  )
  if (refused.length > 0 || stale.length > 0) process.exitCode = 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
