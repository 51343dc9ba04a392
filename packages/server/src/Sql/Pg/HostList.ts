/**
 * libpq's multi-host `DATABASE_URL` (`postgres://h1:5432,h2:5433/laari?target_session_attrs=read-write`,
 * what `pg_autoctl show uri --formation default` prints), which node-postgres cannot read: the hosts in
 * order, the session wanted, and for each host the connection options node-postgres takes.
 *
 * Decided:
 * - `target_session_attrs`: `read-write` (the session is not read-only) and `primary` (the server is not
 *   in recovery) are checked on every host; `any` takes the first host that answers, unchecked, as libpq
 *   does. Without it, a URL of several hosts means `read-write`, not libpq's `any`: laari writes in every
 *   request, and a standby would refuse them all. `read-only`, `standby` and `prefer-standby` are refused,
 *   for the same reason; any other value is unknown, and refused.
 * - `sslmode` as libpq means it: `disable` and `allow` connect without TLS; `prefer` tries TLS and falls
 *   back to none when the server has no TLS (pg_autoctl prints it for nodes made with `--no-ssl`);
 *   `require` encrypts without checking the certificate (pg_autoctl's `--ssl-self-signed`); `verify-ca`
 *   and `verify-full` check it against `sslrootcert`. node-postgres would read `prefer` and `require` as
 *   `verify-full`, which breaks both.
 * - A URL of one host without `target_session_attrs` is not a host list: it goes to node-postgres as is.
 */
export type SessionAttrs = "read-write" | "primary" | "any"

export interface Host {
  readonly host: string
  readonly port: number
  /** Single-host URLs node-postgres reads, to try in order (`sslmode=prefer`: with TLS, then without). */
  readonly urls: ReadonlyArray<string>
}

export interface HostList {
  readonly hosts: ReadonlyArray<Host>
  readonly attrs: SessionAttrs
}

/** A `DATABASE_URL` that cannot be used, said in words (`Startup.explain` prints `message`). */
export class BadDatabaseUrl extends Error {
  readonly code = "LAARI_BAD_DATABASE_URL"
}

const Accepted: ReadonlyArray<string> = ["read-write", "primary", "any"]
const Refused: ReadonlyArray<string> = ["read-only", "standby", "prefer-standby"]

/** `scheme://[userinfo@]hosts[/database][?params]`; the hosts part is libpq's, not WHATWG's. */
const Shape = /^(postgres(?:ql)?):\/\/(?:([^/?#]*)@)?([^/?#@]*)(\/[^?#]*)?(?:\?([^#]*))?$/

/** `[v6]:port`, `name:port` or `name`. */
const HostSpec = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::(\d+))?$/

const bad = (why: string) => new BadDatabaseUrl(why)

const parseHost = (spec: string): { readonly host: string; readonly port: number } => {
  const m = HostSpec.exec(spec)
  if (m === null) throw bad(`"${spec}" is not a host or host:port`)
  const host = m[1] ?? decodeURIComponent(m[2]!)
  const port = m[3] === undefined ? 5432 : Number(m[3])
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad(`port ${m[3]} of ${host} is not a port`)
  return { host, port }
}

/** `sslmode` as libpq means it, in node-postgres's terms (`uselibpqcompat`), the fallback as a second try. */
const sslVariants = (params: URLSearchParams): ReadonlyArray<URLSearchParams> => {
  const mode = params.get("sslmode")
  const with_ = (f: (p: URLSearchParams) => void) => {
    const copy = new URLSearchParams(params)
    f(copy)
    return copy
  }
  switch (mode) {
    case null:
      return [params]
    case "disable":
    case "allow":
      return [with_((p) => p.set("sslmode", "disable"))]
    case "prefer":
      return [
        with_((p) => {
          p.set("sslmode", "require")
          if (!p.has("sslrootcert") && !p.has("uselibpqcompat")) p.set("uselibpqcompat", "true")
        }),
        with_((p) => p.set("sslmode", "disable"))
      ]
    case "require":
    case "verify-ca":
    case "verify-full":
      return [with_((p) => (p.has("uselibpqcompat") ? undefined : p.set("uselibpqcompat", "true")))]
    default:
      throw bad(`sslmode=${mode} is not one of disable, allow, prefer, require, verify-ca, verify-full`)
  }
}

/**
 * The host list of `url`, or `undefined` for a URL of one host without `target_session_attrs` (given to
 * node-postgres unchanged). Throws `BadDatabaseUrl` for what cannot be used.
 */
export const parse = (url: string): HostList | undefined => {
  if (!/^postgres(?:ql)?:\/\//.test(url)) return undefined
  const m = Shape.exec(url)
  // Read loosely first, to tell a list (refused when malformed) from a URL of one host (left alone).
  const authority = /^postgres(?:ql)?:\/\/([^/?#]*)/.exec(url)![1]!
  const specs = authority.slice(authority.lastIndexOf("@") + 1).split(",")
  const params = new URLSearchParams(m?.[5] ?? url.split("?")[1]?.split("#")[0] ?? "")
  if (specs.length <= 1 && !params.has("target_session_attrs")) return undefined
  if (m === null) throw bad("it is not postgres://[user[:password]@]host[:port][,host[:port]...]/database")
  const [, scheme, userinfo, , path] = m
  if (specs.some((s) => s === "")) throw bad("a host of the list is empty")
  const attrs = params.get("target_session_attrs") ?? "read-write"
  if (Refused.includes(attrs))
    throw bad(
      `target_session_attrs=${attrs} would send laari's writes to a standby: use read-write (or primary)`
    )
  if (!Accepted.includes(attrs))
    throw bad(`target_session_attrs=${attrs} is unknown: use read-write, primary or any`)
  params.delete("target_session_attrs")
  for (const key of ["host", "hostaddr", "port"])
    if (params.has(key)) throw bad(`the parameter ${key} cannot be combined with a list of hosts`)
  const variants = sslVariants(params)
  const hosts = specs.map((spec) => {
    const { host, port } = parseHost(spec)
    const authority = `${userinfo === undefined ? "" : `${userinfo}@`}${host.includes(":") ? `[${host}]` : host}:${port}`
    const urls = variants.map((p) => {
      const search = p.toString()
      return `${scheme}://${authority}${path ?? ""}${search === "" ? "" : `?${search}`}`
    })
    return { host, port, urls }
  })
  return { hosts, attrs: attrs as SessionAttrs }
}

/** `h1:5432,h2:5433`: the hosts as an operator wrote them, for messages. */
export const describe = (list: HostList): string =>
  list.hosts.map((h) => `${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}`).join(",")
