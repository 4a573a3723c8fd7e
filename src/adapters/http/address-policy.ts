import net from 'node:net';

// Where a live-mode webhook may never connect: loopback, private, carrier-grade NAT,
// link-local (cloud metadata lives at 169.254.169.254), multicast, unspecified and reserved ranges.
const FORBIDDEN = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  FORBIDDEN.addSubnet(prefix, bits, 'ipv6');
}

/**
 * True when host is an IP address a live webhook must not reach. IPv4-mapped
 * IPv6 addresses (::ffff:10.0.0.1) are judged by their IPv4 part; names are
 * not addresses and answer false (they are checked once resolved).
 */
export function isForbiddenAddress(host: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(host);
  if (mapped?.[1]) return FORBIDDEN.check(mapped[1], 'ipv4');
  const family = net.isIP(host);
  if (family === 4) return FORBIDDEN.check(host, 'ipv4');
  if (family === 6) return FORBIDDEN.check(host, 'ipv6');
  return false;
}
