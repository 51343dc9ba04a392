/**
 * The `User-Agent`s laari's own clients send, so the service can tell them apart (the audit log records
 * the CLI's changes as the CLI's). A module of its own: the CLI loads it without the server.
 */

/** The CLI's, followed by `/` and its version. */
export const CliAgent = "laari-cli"
