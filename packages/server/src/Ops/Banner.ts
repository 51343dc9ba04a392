/**
 * What the service says when it has started: where it listens, where its data lives, which database is
 * in use, where the docs, the dashboard and the metrics are, who signs in to the dashboard first, and how
 * to get keys again. Written to the terminal, not the log stream: with `LAARI_LOG_FORMAT=json` it goes to
 * stderr (stdout stays one JSON object a line) and shows no key, token or password, only where to get them.
 */
import { resolve } from "node:path"
import type * as Config from "../Platform/Config.js"
import * as Notify from "../Notify/Delivery.js"
import * as OpsToken from "../Platform/OpsToken.js"

export interface Seeded {
  readonly merchant: { readonly id: string; readonly name: string }
  readonly outlet: { readonly id: number; readonly name: string } | undefined
  readonly secretKey: string
  readonly publishableKey: string
  /** The merchant's owner: the dashboard's first sign-in, with a one-time password to change there. */
  readonly owner: { readonly email: string; readonly password: string | null }
}

/** A connection string without its password. */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    // libpq's host list (`h1:5432,h2:5433`) is no WHATWG URL: its password is hidden by hand.
    if (/^postgres(?:ql)?:\/\/[^/?#]*,/.test(url))
      return url.replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*:)[^/?#]*@/, "$1***@")
    return "(unparsable DATABASE_URL)"
  }
}

/** A URL without its query, which may carry a token. */
const withoutQuery = (url: string): string => {
  const u = new URL(url)
  return `${u.origin}${u.pathname}`
}

const noticeLines = (
  notices: { readonly url: string; readonly signing: Notify.SigningSecret } | undefined,
  showSecrets: boolean
): ReadonlyArray<string> => {
  if (notices === undefined)
    return [
      "  notices     kept in laari (the wallet page); LAARI_NOTIFY_URL sends them to the wallet's service"
    ]
  const { signing } = notices
  const where =
    signing.source === "env"
      ? "signed with LAARI_NOTIFY_SECRET"
      : `signed with a secret generated once and kept in the database (server_secrets "${Notify.SecretName}"); LAARI_NOTIFY_SECRET sets your own`
  return [
    `  notices     POST ${withoutQuery(notices.url)}, ${where}`,
    ...(showSecrets && signing.source === "database" ? [`              ${signing.secret}`] : [])
  ]
}

const shellWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`)

/**
 * How to run the CLI against this service, from anywhere in the repository: `pnpm laari`, with the
 * service's address when it is not the CLI's default, and its data folder when the CLI would not look
 * there (`OpsToken.searchDirs`).
 */
export const cliCommand = (config: Config.ServerConfig, token: OpsToken.Resolved): string => {
  const env = [
    ...(config.port === 4000 ? [] : [`LAARI_URL=http://localhost:${config.port}`]),
    ...(token.file !== undefined && resolve(token.file, "..") !== OpsToken.repositoryDataDir()
      ? [`LAARI_DATA_DIR=${shellWord(resolve(token.file, ".."))}`]
      : [])
  ]
  return [...env, "pnpm laari"].join(" ")
}

export const lines = (input: {
  readonly config: Config.ServerConfig
  readonly token: OpsToken.Resolved
  readonly seeded: Seeded | undefined
  /** Keys and the token are shown only on a terminal-facing text output. */
  readonly showSecrets: boolean
  readonly processes: number
  /** Where customer notices go, when they leave laari (`LAARI_NOTIFY_URL`). */
  readonly notices?: { readonly url: string; readonly signing: Notify.SigningSecret } | undefined
}): ReadonlyArray<string> => {
  const { config, token, seeded, showSecrets } = input
  const laari = cliCommand(config, token)
  const base = config.baseUrl
  const database =
    config.databaseUrl === undefined
      ? `embedded PGlite, data in ${resolve(config.dataDir ?? "./.data")}`
      : `PostgreSQL ${redactUrl(config.databaseUrl)}`
  const out = [
    `laari is running on ${base}${input.processes > 1 ? ` (${input.processes} processes)` : ""}`,
    `  database    ${database}`,
    `  clock       ${config.clock}${config.clock === "manual" ? ` (move it with: ${laari} clock advance --by 1d)` : ""}`,
    `  API docs    ${base}/docs (OpenAPI: ${base}/openapi.json)`,
    `  dashboard   ${base}/dashboard`,
    `  metrics     ${base}/metrics (Authorization: Bearer <ops token>)`
  ]
  const tokenWhere =
    token.source === "env"
      ? "from LAARI_OPS_TOKEN"
      : token.file === undefined
        ? "generated for this run only (the data folder is not writable); set LAARI_OPS_TOKEN"
        : `in ${token.file}${token.source === "generated" ? " (generated now)" : ""}; LAARI_OPS_TOKEN sets your own`
  if (config.development === true)
    out.push(
      `  development on: one-time codes readable with ${laari} customers codes --phone <phone>; never set LAARI_DEVELOPMENT in production`
    )
  out.push(`  ops token   ${tokenWhere}`)
  if (showSecrets && token.source === "generated") out.push(`              ${token.value}`)
  out.push(...noticeLines(input.notices, showSecrets))
  if (seeded !== undefined) {
    out.push(
      "",
      `Seeded the demo merchant "${seeded.merchant.name}" (${seeded.merchant.id})` +
        (seeded.outlet === undefined ? "." : ` with outlet ${seeded.outlet.id} "${seeded.outlet.name}".`)
    )
    if (showSecrets)
      out.push(
        `  sandbox secret key:      ${seeded.secretKey}`,
        `  sandbox publishable key: ${seeded.publishableKey}`
      )
    out.push(`  dashboard owner:         ${seeded.owner.email} (${base}/dashboard)`)
    if (showSecrets && seeded.owner.password !== null)
      out.push(`  one-time password:       ${seeded.owner.password} (change it at first sign-in)`)
  }
  out.push(
    "",
    "Keys are shown once. To get one again:",
    `  ${laari} merchants list`,
    `  ${laari} keys create --merchant <merchant id> --environment test`,
    "(outside this repository: npx laari ...; `laari --help` lists every command)"
  )
  return out
}
