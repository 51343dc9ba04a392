/**
 * Where deliveries may go, against SSRF: every endpoint, test or live, only to `https` URLs on
 * public addresses. The check runs at registration for literal addresses and local names, and at every
 * connection for resolved names, so a name that later resolves to a private address (DNS rebinding) is
 * refused when it matters. Test keys are every merchant's, so test endpoints get no exemption: local
 * development goes through `laari listen`. `LAARI_WEBHOOK_ALLOW_PRIVATE=true` lifts the rules for every
 * endpoint: for private networks where TLS ends at a proxy, and for tests.
 */
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
  ["192.88.99.0", 24], // 6to4 relays
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, broadcast
] as const)
  blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ["::ffff:0:0:0", 96], // IPv4-translated (SIIT): any IPv4 address, private ones included
  ["64:ff9b::", 96], // NAT64 of any IPv4 address, private ones included
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64],
  ["2001::", 23], // IETF protocol assignments: Teredo (an IPv4 address inside), ORCHID, benchmarking
  ["2001:db8::", 32],
  ["3fff::", 20], // documentation
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8] // multicast
] as const)
  blocked.addSubnet(net, prefix, "ipv6")

/** The 16 bytes of an IPv6 address (`isIP(address) === 6`), the dotted IPv4 tail form included. */
const ipv6Bytes = (address: string): Uint8Array => {
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address)
  const text = dotted
    ? `${dotted[1]}${dotted[2]!
        .split(".")
        .map(Number)
        .reduce<Array<string>>((groups, n, i) => {
          if (i % 2 === 0) groups.push("")
          groups[groups.length - 1] += n.toString(16).padStart(2, "0")
          return groups
        }, [])
        .join(":")}`
    : address
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined]
  const left = head === "" ? [] : head!.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
  const bytes = new Uint8Array(16)
  groups.forEach((g: string, i) => {
    const n = Number.parseInt(g, 16)
    bytes[2 * i] = n >> 8
    bytes[2 * i + 1] = n & 0xff
  })
  return bytes
}

/** The IPv4 address an IPv6 one carries where it is routed to: IPv4-mapped (`::ffff:a.b.c.d`), 6to4. */
const embeddedIpv4 = (address: string): string | undefined => {
  const b = ipv6Bytes(address)
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0)
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.subarray(12, 16).join(".")
  if (b[0] === 0x20 && b[1] === 0x02) return b.subarray(2, 6).join(".")
  return undefined
}

/** Whether an IP address is public: none of the private, loopback, link-local or reserved ranges. */
export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 0) return false
  if (family === 4) return !blocked.check(address, "ipv4")
  const ipv4 = embeddedIpv4(address)
  if (ipv4 !== undefined && !isPublicAddress(ipv4)) return false
  return !blocked.check(address, "ipv6")
}

export interface Policy {
  /** `LAARI_WEBHOOK_ALLOW_PRIVATE=true`. */
  readonly allowPrivate: boolean
}

/** Whether deliveries must go to public addresses over https: always, unless the operator allows private. */
export const mustBePublic = (policy: Policy): boolean => !policy.allowPrivate

const hostOf = (url: URL): string =>
  url.hostname
    .replace(/^\[(.*)\]$/, "$1")
    .toLowerCase()
    .replace(/\.+$/, "")

/** Names that resolve on the host itself or its link, whatever DNS says. */
const isLocalName = (host: string): boolean =>
  host === "" ||
  host === "localhost" ||
  host.endsWith(".localhost") ||
  host.endsWith(".local") ||
  host.endsWith(".internal") ||
  !host.includes(".")

/** What the refusals say: why, and the two ways to a local receiver. */
export const PrivateTarget =
  "must be a public address; private, loopback and link-local targets are refused (for local development use `laari listen`; an operator may allow them with LAARI_WEBHOOK_ALLOW_PRIVATE=true)"

/** Why `raw` cannot be an endpoint, or `undefined` when it can. */
export const refuseUrl = (raw: string, policy: Policy): string | undefined => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "must be an absolute http or https URL"
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http or https URL"
  if (url.username !== "" || url.password !== "") return "must not carry a user name or password"
  if (mustBePublic(policy)) {
    if (url.protocol !== "https:")
      return "must be https (for local development use `laari listen`; an operator may allow http with LAARI_WEBHOOK_ALLOW_PRIVATE=true)"
    const host = hostOf(url)
    if (isIP(host) !== 0 ? !isPublicAddress(host) : isLocalName(host)) return PrivateTarget
  }
  return undefined
}
