/**
 * Writes `docs/wallet-connector.openapi.json` from the code (`WalletConnector/Api`); the test
 * WalletConnectorDocument.test.ts fails while the two differ.
 */
import { writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { DocumentPath, documentText } from "../src/WalletConnector/Document.js"

const file = join(dirname(fileURLToPath(import.meta.url)), "../../..", DocumentPath)
writeFileSync(file, documentText())
console.log(`wrote ${file}`)
