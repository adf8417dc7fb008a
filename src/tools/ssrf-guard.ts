import ipaddr from 'ipaddr.js';

/**
 * Which hosts and addresses web_fetch may reach: only public unicast ones. Each function
 * returns undefined when the destination is allowed, or a reason written for the model.
 *
 * Literal forms like `2130706433`, `0177.0.0.1`, `0x7f000001` and `127.1` are already turned
 * into dotted quads by the WHATWG URL parser before they get here; IPv6 literals arrive
 * without brackets.
 */

const IPV4_REASONS: Record<string, string> = {
  unspecified: "in 0.0.0.0/8 ('this network'), which reaches this machine",
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (169.254.0.0/16, where cloud metadata services live)',
  loopback: 'a loopback address (this machine)',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10, shared private space)',
  private: 'a private network address',
  reserved: 'a reserved address',
  as112: 'a reserved (AS112) address',
  amt: 'a reserved (AMT) address',
};

const IPV6_REASONS: Record<string, string> = {
  unspecified: 'the unspecified address (::), which reaches this machine',
  linkLocal: 'a link-local address (fe80::/10)',
  multicast: 'a multicast address',
  loopback: 'a loopback address (::1, this machine)',
  uniqueLocal: 'a unique-local private address (fc00::/7)',
  deprecatedSiteLocal: 'a site-local private address (fec0::/10)',
  teredo: 'a Teredo tunnel address',
};

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parse('2000::');

/** Why `address` (an IP literal, v4 or v6) may not be fetched, or undefined when it is public. */
export function blockedAddressReason(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not a valid IP address`;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return ipv4Reason(parsed as ipaddr.IPv4, address);
  return ipv6Reason(parsed as ipaddr.IPv6, address);
}

function ipv4Reason(ip: ipaddr.IPv4, shown: string): string | undefined {
  const range = ip.range();
  if (range === 'unicast') return undefined;
  return `${shown} is ${IPV4_REASONS[range] ?? `a special-purpose address (${range})`}`;
}

function ipv6Reason(ip: ipaddr.IPv6, shown: string): string | undefined {
  // IPv4 hidden inside IPv6 is judged by the IPv4 address it carries.
  if (ip.isIPv4MappedAddress()) return embedded(ip.toIPv4Address(), shown, 'an IPv4-mapped IPv6 address');
  const range = ip.range();
  const bytes = ip.toByteArray();
  switch (range) {
    case 'rfc6145':
      return embedded(v4FromBytes(bytes, 12), shown, 'an IPv4-translated IPv6 address');
    case 'rfc6052':
      // 64:ff9b:1::/48 is the local-use NAT64 prefix; where it puts the IPv4 part depends on the network.
      if (ip.parts[2] === 1) return `${shown} is a local-use NAT64 address`;
      return embedded(v4FromBytes(bytes, 12), shown, 'a NAT64 address');
    case '6to4':
      return embedded(v4FromBytes(bytes, 2), shown, 'a 6to4 address');
    case 'unicast':
      // ipaddr.js calls the unassigned and IPv4-compatible (::a.b.c.d) space "unicast" too; only 2000::/3 is global.
      if (ip.match(GLOBAL_UNICAST_V6, 3)) return undefined;
      return `${shown} is outside the global unicast range (2000::/3)`;
    default:
      return `${shown} is ${IPV6_REASONS[range] ?? `a special-purpose address (${range})`}`;
  }
}

function embedded(v4: ipaddr.IPv4, shown: string, what: string): string | undefined {
  const inner = ipv4Reason(v4, v4.toString());
  return inner === undefined ? undefined : `${shown} is ${what} of ${inner}`;
}

function v4FromBytes(bytes: number[], at: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([bytes[at] ?? 0, bytes[at + 1] ?? 0, bytes[at + 2] ?? 0, bytes[at + 3] ?? 0]);
}

/** Suffixes of names that only mean something inside a private network or this machine. */
const PRIVATE_SUFFIXES = ['.localhost', '.local', '.localdomain', '.internal', '.home.arpa', '.intranet', '.lan'];
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** Why a host name (not an IP literal) may not be fetched, before it is even resolved. */
export function blockedHostnameReason(hostname: string): string | undefined {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  if (name === '') return 'the URL has no host';
  if (METADATA_NAMES.has(name)) return `${hostname} is a cloud metadata service`;
  if (name === 'localhost' || name.endsWith('.localhost')) return `${hostname} is a localhost name (this machine)`;
  for (const suffix of PRIVATE_SUFFIXES) {
    if (name.endsWith(suffix)) return `${hostname} is a private-network name (${suffix})`;
  }
  // Single-label names resolve through local search domains, i.e. to machines on this network.
  if (!name.includes('.')) return `${hostname} has no domain, so it can only name a machine on the local network`;
  return undefined;
}
