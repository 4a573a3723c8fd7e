import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { AddressPolicy } from '../../ports/address-policy.port.ts';

/**
 * What an address is, for a webhook: public unicast (allowed), local (loopback,
 * RFC 1918 private, IPv6 unique-local: allowed only with the operator's switch),
 * or forbidden whatever the switch (link-local and metadata, CGNAT, reserved,
 * documentation, benchmarking, multicast, unspecified, translations of a non-public IPv4…).
 */
export type AddressClass = 'public' | 'local' | 'forbidden';

/** An address's class and the range that decided it, in words for messages. */
export interface Classification {
  readonly class: AddressClass;
  /** e.g. "a loopback address", "6to4 of 127.0.0.1 (a loopback address)". */
  readonly range: string;
}

// The range names of ipaddr.js 2.5 (lib/ipaddr.js, SpecialRanges) that the switch lets through.
const LOCAL_V4 = new Set(['loopback', 'private']);
const LOCAL_V6 = new Set(['loopback', 'uniqueLocal']);

// Ranges ipaddr.js does not name (it calls them "unicast"), added here. Everything in IPv6 outside
// 2000::/3, the global unicast space (RFC 4291 §2.4, IANA's IPv6 address space), is refused too.
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96'); // ::a.b.c.d, deprecated by RFC 4291 §2.5.5.1
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
// ipaddr.js's "rfc6052" holds both; only the well-known prefix has a defined embedding (RFC 6052 §2.1).
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

const DESCRIPTIONS: Readonly<Record<string, string>> = {
  loopback: 'a loopback address',
  private: 'a private (RFC 1918) address',
  uniqueLocal: 'a unique-local (fc00::/7) address',
  linkLocal: 'a link-local address (where cloud metadata services live)',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  carrierGradeNat: 'a carrier-grade NAT (100.64.0.0/10) address',
  reserved: 'a reserved, documentation or benchmarking address',
  benchmarking: 'a benchmarking address',
  deprecatedSiteLocal: 'a site-local (fec0::/10) address',
  discard: 'a discard-only (100::/64) address',
  ipv4Compatible: 'an IPv4-compatible (::a.b.c.d) address',
  nat64LocalUse: 'a local-use NAT64 (64:ff9b:1::/48) address',
  notGlobalUnicast: 'outside the global unicast space (2000::/3)',
};
const describe = (range: string): string => DESCRIPTIONS[range] ?? `a special-purpose address (${range})`;

function classifyV4(ip: ipaddr.IPv4): Classification {
  const range = ip.range();
  if (range === 'unicast') return { class: 'public', range: 'a public address' };
  return { class: LOCAL_V4.has(range) ? 'local' : 'forbidden', range: describe(range) };
}

function v4(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * A translation (NAT64, 6to4, Teredo) reaches its IPv4 through a gateway or relay
 * that may sit inside the operator's network: only a public IPv4 will do, whatever the switch.
 */
function embedding(via: string, ...targets: ipaddr.IPv4[]): Classification {
  for (const target of targets) {
    const inner = classifyV4(target);
    if (inner.class !== 'public') return { class: 'forbidden', range: `${via} of ${target.toString()} (${inner.range})` };
  }
  return { class: 'public', range: `${via} of a public address` };
}

function classifyV6(ip: ipaddr.IPv6): Classification {
  const range: string = ip.range();
  const [, p1 = 0, p2 = 0, p3 = 0, , , p6 = 0, p7 = 0] = ip.parts;
  switch (range) {
    case 'ipv4Mapped': {
      // The kernel connects ::ffff:a.b.c.d as the IPv4 address itself: judged exactly as that address.
      const inner = classifyV4(ip.toIPv4Address());
      return { class: inner.class, range: inner.range };
    }
    case 'rfc6145':
      return embedding('an IPv4-translated address', v4(p6, p7));
    case 'rfc6052':
      return ip.match(NAT64_WELL_KNOWN) ? embedding('NAT64', v4(p6, p7)) : { class: 'forbidden', range: describe('nat64LocalUse') };
    case '6to4':
      return embedding('6to4', v4(p1, p2));
    case 'teredo':
      // 2001:0:server(32 bits):flags:port:client, the client's IPv4 stored inverted (RFC 4380 §4).
      return embedding('Teredo', v4(p2, p3), v4(p6 ^ 0xffff, p7 ^ 0xffff));
    case 'unicast':
      if (ip.match(IPV4_COMPATIBLE)) return { class: 'forbidden', range: describe('ipv4Compatible') };
      if (!ip.match(GLOBAL_UNICAST)) return { class: 'forbidden', range: describe('notGlobalUnicast') };
      return { class: 'public', range: 'a public address' };
    default:
      return { class: LOCAL_V6.has(range) ? 'local' : 'forbidden', range: describe(range) };
  }
}

// ipaddr.js reads "::a.b.c.d" (IPv4-compatible) as "::ffff:a.b.c.d" (IPv4-mapped), and libuv writes an
// IPv4-compatible socket address in exactly that form: it is read here as what it is.
const COMPATIBLE_TEXT = /^::(\d{1,3}(?:\.\d{1,3}){3})(?:%.*)?$/;

function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const compatible = COMPATIBLE_TEXT.exec(address);
  if (!compatible?.[1]) return ipaddr.parse(address);
  const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(compatible[1]).octets;
  return new ipaddr.IPv6([0, 0, 0, 0, 0, 0, (a << 8) | b, (c << 8) | d]);
}

/**
 * Classifies an IP address (IPv4, or IPv6 with an optional zone), or answers
 * undefined when the text is not an address.
 */
export function classifyAddress(address: string): Classification | undefined {
  if (net.isIP(address) === 0) return undefined;
  const ip = parse(address);
  return ip.kind() === 'ipv4' ? classifyV4(ip as ipaddr.IPv4) : classifyV6(ip as ipaddr.IPv6);
}

// Names that only ever mean this machine, its network, or a cloud's metadata service. They are refused
// before any lookup so that the merchant hears why at once; addresses are still judged on every delivery.
const METADATA_NAMES = /^(metadata|metadata\.google\.internal|instance-data(\.ec2\.internal)?)$/;
const LOOPBACK_NAMES = /^(localhost|.+\.localhost)$/;
// Single-label names resolve through the host's search domains, to hosts on its own network.
const PRIVATE_NAMES = /^([^.]+|.+\.local|.+\.internal|.+\.lan|.+\.home\.arpa)$/;

function classifyName(name: string): Classification {
  if (METADATA_NAMES.test(name)) return { class: 'forbidden', range: 'a cloud metadata service name' };
  if (LOOPBACK_NAMES.test(name)) return { class: 'local', range: 'a loopback name' };
  if (PRIVATE_NAMES.test(name)) return { class: 'local', range: 'a local network name' };
  return { class: 'public', range: 'a public name' };
}

/**
 * The webhook address policy on ipaddr.js's range classification: only
 * public unicast addresses, plus, with allowPrivateNetworks (local
 * development, test suites), loopback, RFC 1918 private and IPv6 unique-local
 * addresses and their IPv4-mapped forms. Link-local (cloud metadata) and
 * every other special range stay refused even then.
 */
export function createAddressPolicy(options: { readonly allowPrivateNetworks: boolean }): AddressPolicy {
  const { allowPrivateNetworks } = options;
  const refusal = (subject: string, verdict: Classification): string | undefined => {
    if (verdict.class === 'public' || (verdict.class === 'local' && allowPrivateNetworks)) return undefined;
    return `${subject} is ${verdict.range}`;
  };
  const refuseAddress = (address: string): string | undefined => {
    const verdict = classifyAddress(address);
    return verdict ? refusal(address, verdict) : `${JSON.stringify(address)} is not an IP address`;
  };
  return {
    allowPrivateNetworks,
    refuseAddress,
    refuseHost(host) {
      const bare = host.replace(/^\[(.*)\]$/, '$1');
      if (net.isIP(bare)) return refuseAddress(bare);
      const name = bare.toLowerCase().replace(/\.+$/, '');
      return refusal(name, classifyName(name));
    },
  };
}
