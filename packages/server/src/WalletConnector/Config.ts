/**
 * The wallet connector's configuration (`Platform/WalletConnectorConfig`, read with the rest of the
 * server's), and what the client needs of it.
 */
import type { ClientConfig } from "./Client.js"
import { Redacted } from "effect"
import type { WalletConnectorConfig } from "../Platform/WalletConnectorConfig.js"

export * from "../Platform/WalletConnectorConfig.js"

/** What the client needs of it. */
export const clientConfig = (config: WalletConnectorConfig): ClientConfig => ({
  url: config.url,
  token: Redacted.value(config.token),
  timeoutMs: config.timeoutMs
})
