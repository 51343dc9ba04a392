/**
 * The wallet connector's OpenAPI document as the file `docs/wallet-connector.openapi.json` holds it:
 * pretty-printed, ending in a newline. The service serves the same document (compact) at
 * `GET /wallet-connector/openapi.json`; `pnpm generate:wallet-connector` rewrites the file.
 */
import * as OpenApi from "@effect/platform/OpenApi"
import { WalletConnectorApi } from "./Api.js"

/** Where the checked-in copy is, from the repository's root. */
export const DocumentPath = "docs/wallet-connector.openapi.json"

export const documentText = (): string => `${JSON.stringify(OpenApi.fromApi(WalletConnectorApi), null, 2)}\n`
