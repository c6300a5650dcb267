// Where a webhook may be sent (contract §18): not to the server's own
// network. A destination's host is resolved and every address it resolves to
// must be public unicast; private, loopback, link-local (the cloud metadata
// service, 169.254.169.254), unique-local, carrier-grade NAT, multicast,
// unspecified, reserved and the IPv6 forms that embed an IPv4 address are
// refused, unless ARENA_WEBHOOKS_ALLOW_PRIVATE is set (tests, a backend on
// premises). Checked when an endpoint is created or its URL changed, and
// again at every attempt: a name may resolve elsewhere tomorrow.
// The classification is ipaddr.js's (the library behind Express's proxy-addr).
import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

export type DestinationCheck = { ok: true; addresses: string[] } | { ok: false; reason: 'destination_not_allowed' | 'dns_failed'; detail: string }

/** Whether one address is a public unicast one. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  return parsed.range() === 'unicast'
}

/** The URL's host as a resolver takes it: an IPv6 literal without its brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') && url.hostname.endsWith(']') ? url.hostname.slice(1, -1) : url.hostname
}

/**
 * Resolves the URL's host (every address, IPv4 and IPv6) and checks each.
 * With `allowPrivate`, any address that resolves passes.
 */
export async function checkDestination(url: URL, allowPrivate: boolean): Promise<DestinationCheck> {
  const host = hostOf(url)
  let addresses: string[]
  if (ipaddr.isValid(host)) {
    addresses = [host]
  } else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address)
    } catch (error) {
      return { ok: false, reason: 'dns_failed', detail: `${host} does not resolve (${(error as { code?: string }).code ?? 'error'})` }
    }
    if (addresses.length === 0) return { ok: false, reason: 'dns_failed', detail: `${host} does not resolve` }
  }
  if (!allowPrivate) {
    const refused = addresses.find((address) => !isPublicAddress(address))
    if (refused !== undefined) return { ok: false, reason: 'destination_not_allowed', detail: `${host} resolves to ${refused}, a private, loopback or link-local address` }
  }
  return { ok: true, addresses }
}
