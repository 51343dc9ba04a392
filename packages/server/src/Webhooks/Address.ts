/**
 * Where deliveries may go (issue 9, SSRF): live endpoints only to `https` URLs on public addresses; the
 * check runs at registration for literal addresses and at every connection for resolved names, so a
 * name that later resolves to a private address (DNS rebinding) is refused when it matters. Test-mode
 * endpoints may be `http` and local, for development. `LAARI_WEBHOOK_ALLOW_PRIVATE=true` lifts both rules
 * for live endpoints too: for private networks where TLS ends at a proxy, and for tests.
 */
import type { Ids } from "@laari/core"
import { BlockList, isIP } from "node:net"

const blocked = new BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, broadcast
] as const)
  blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96], // NAT64 of any IPv4 address, private ones included
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8] // multicast
] as const)
  blocked.addSubnet(net, prefix, "ipv6")

/** Whether an IP address is public: none of the private, loopback, link-local or reserved ranges. */
export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 0) return false
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
    if (mapped) return isPublicAddress(mapped[1]!)
    return !blocked.check(address, "ipv6")
  }
  return !blocked.check(address, "ipv4")
}

export interface Policy {
  /** `LAARI_WEBHOOK_ALLOW_PRIVATE=true`. */
  readonly allowPrivate: boolean
}

/** Whether deliveries of `environment` must go to public addresses. */
export const mustBePublic = (policy: Policy, environment: Ids.Environment): boolean =>
  environment === "live" && !policy.allowPrivate

const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** Why `raw` cannot be an endpoint of `environment`, or `undefined` when it can. */
export const refuseUrl = (raw: string, environment: Ids.Environment, policy: Policy): string | undefined => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "must be an absolute http or https URL"
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http or https URL"
  if (url.username !== "" || url.password !== "") return "must not carry a user name or password"
  if (mustBePublic(policy, environment)) {
    if (url.protocol !== "https:") return "must be https for a live endpoint"
    const host = hostOf(url)
    if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local"))
      return "must be a public address for a live endpoint"
    if (isIP(host) !== 0 && !isPublicAddress(host)) return "must be a public address for a live endpoint"
  }
  return undefined
}
