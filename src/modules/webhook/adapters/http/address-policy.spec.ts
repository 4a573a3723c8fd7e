import { describe, expect, test } from 'vitest';
import { createAddressPolicy } from './address-policy.ts';

const strict = createAddressPolicy({ allowPrivateNetworks: false });
const local = createAddressPolicy({ allowPrivateNetworks: true });
const verdict = (refusal: string | undefined) => (refusal === undefined ? 'allowed' : 'refused');

// [address, without the switch, with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, what it is]
type Row = readonly [string, 'allowed' | 'refused', 'allowed' | 'refused', string];

const REFUSED_ALWAYS: Row[] = [
  // The addresses the issue found accepted in live mode.
  ['::127.0.0.1', 'refused', 'refused', 'IPv4-compatible loopback (URL() writes it ::7f00:1)'],
  ['::7f00:1', 'refused', 'refused', 'IPv4-compatible loopback, as URL() writes it'],
  ['64:ff9b:1::7f00:1', 'refused', 'refused', 'local-use NAT64 (RFC 8215)'],
  ['2002:7f00:1::', 'refused', 'refused', '6to4 of 127.0.0.1'],
  ['fec0::1', 'refused', 'refused', 'site-local (deprecated)'],
  ['192.0.2.1', 'refused', 'refused', 'documentation TEST-NET-1'],
  ['198.51.100.1', 'refused', 'refused', 'documentation TEST-NET-2'],
  // Link-local and metadata stay refused even with the switch.
  ['169.254.169.254', 'refused', 'refused', 'link-local, cloud metadata'],
  ['169.254.0.1', 'refused', 'refused', 'link-local'],
  ['fe80::1', 'refused', 'refused', 'IPv6 link-local'],
  ['fe80::1%eth0', 'refused', 'refused', 'IPv6 link-local with a zone, as a socket reports it'],
  ['::ffff:169.254.169.254', 'refused', 'refused', 'IPv4-mapped metadata'],
  ['fd00:ec2::254', 'refused', 'allowed', 'AWS IPv6 metadata is unique-local: allowed only with the switch'],
  // Translations of a non-public IPv4, whatever the switch.
  ['64:ff9b::7f00:1', 'refused', 'refused', 'NAT64 of 127.0.0.1'],
  ['64:ff9b::a00:1', 'refused', 'refused', 'NAT64 of 10.0.0.1'],
  ['64:ff9b::a9fe:a9fe', 'refused', 'refused', 'NAT64 of 169.254.169.254'],
  ['2002:a00:1::1', 'refused', 'refused', '6to4 of 10.0.0.1'],
  ['2002:c000:201::', 'refused', 'refused', '6to4 of 192.0.2.1'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'refused', 'refused', 'Teredo, client 127.0.0.1 (stored inverted)'],
  ['2001:0:a00:1:8000:63bf:a247:28f1', 'refused', 'refused', 'Teredo, server 10.0.0.1'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'refused', 'refused', 'Teredo, client 192.0.2.45 (the RFC 4380 example)'],
  ['::ffff:0:7f00:1', 'refused', 'refused', 'IPv4-translated 127.0.0.1 (RFC 6145)'],
  ['::a00:1', 'refused', 'refused', 'IPv4-compatible 10.0.0.1'],
  ['::5db8:d70e', 'refused', 'refused', 'IPv4-compatible, even of a public address (deprecated form)'],
  ['::93.184.215.14', 'refused', 'refused', 'IPv4-compatible of a public address, as libuv writes it (ipaddr.js alone would read it as mapped)'],
  ['0:0:0:0:0:0:127.0.0.1', 'refused', 'refused', 'IPv4-compatible loopback, written out'],
  // Documentation, benchmarking and the other special ranges.
  ['203.0.113.1', 'refused', 'refused', 'documentation TEST-NET-3'],
  ['2001:db8::1', 'refused', 'refused', 'IPv6 documentation'],
  ['3fff::1', 'refused', 'refused', 'IPv6 documentation (RFC 9637)'],
  ['198.18.0.1', 'refused', 'refused', 'benchmarking 198.18/15'],
  ['198.19.255.255', 'refused', 'refused', 'benchmarking 198.18/15, last'],
  ['2001:2::1', 'refused', 'refused', 'IPv6 benchmarking'],
  ['100.64.0.1', 'refused', 'refused', 'carrier-grade NAT'],
  ['100.127.255.255', 'refused', 'refused', 'carrier-grade NAT, last'],
  ['0.0.0.0', 'refused', 'refused', 'unspecified (reaches this host on Linux)'],
  ['0.1.2.3', 'refused', 'refused', '"this network" 0/8'],
  ['::', 'refused', 'refused', 'IPv6 unspecified'],
  ['255.255.255.255', 'refused', 'refused', 'broadcast'],
  ['240.0.0.1', 'refused', 'refused', 'reserved 240/4'],
  ['192.0.0.8', 'refused', 'refused', 'IETF protocol assignments 192.0.0/24'],
  ['192.88.99.1', 'refused', 'refused', '6to4 relay anycast (deprecated)'],
  ['224.0.0.1', 'refused', 'refused', 'multicast'],
  ['ff02::1', 'refused', 'refused', 'IPv6 multicast'],
  ['100::1', 'refused', 'refused', 'discard-only'],
  ['2001:10::1', 'refused', 'refused', 'ORCHID'],
  ['5f00::1', 'refused', 'refused', 'segment routing'],
  ['4000::1', 'refused', 'refused', 'outside global unicast 2000::/3'],
];

const LOCAL: Row[] = [
  ['127.0.0.1', 'refused', 'allowed', 'loopback'],
  ['127.255.255.254', 'refused', 'allowed', 'the rest of 127/8'],
  ['::1', 'refused', 'allowed', 'IPv6 loopback'],
  ['10.0.0.1', 'refused', 'allowed', 'private 10/8'],
  ['10.255.255.255', 'refused', 'allowed', 'private 10/8, last'],
  ['172.16.0.1', 'refused', 'allowed', 'private 172.16/12'],
  ['172.31.255.255', 'refused', 'allowed', 'private 172.16/12, last'],
  ['192.168.1.1', 'refused', 'allowed', 'private 192.168/16'],
  ['fc00::1', 'refused', 'allowed', 'unique-local'],
  ['fd12:3456:789a::1', 'refused', 'allowed', 'unique-local (fd)'],
  ['::ffff:127.0.0.1', 'refused', 'allowed', 'IPv4-mapped loopback'],
  ['::FFFF:10.0.0.1', 'refused', 'allowed', 'IPv4-mapped private, upper case'],
  ['::ffff:a00:1', 'refused', 'allowed', 'IPv4-mapped private in hex (how URL() writes [::ffff:10.0.0.1])'],
];

const PUBLIC: Row[] = [
  ['93.184.215.14', 'allowed', 'allowed', 'public IPv4'],
  ['8.8.8.8', 'allowed', 'allowed', 'public IPv4'],
  ['172.15.255.255', 'allowed', 'allowed', 'just below 172.16/12'],
  ['172.32.0.1', 'allowed', 'allowed', 'just above 172.16/12'],
  ['192.169.0.1', 'allowed', 'allowed', 'just above 192.168/16'],
  ['11.0.0.1', 'allowed', 'allowed', 'just above 10/8'],
  ['100.63.255.255', 'allowed', 'allowed', 'just below carrier-grade NAT'],
  ['100.128.0.0', 'allowed', 'allowed', 'just above carrier-grade NAT'],
  ['198.17.255.255', 'allowed', 'allowed', 'just below benchmarking'],
  ['2606:4700::1111', 'allowed', 'allowed', 'public IPv6'],
  ['2001:4860:4860::8888', 'allowed', 'allowed', 'public IPv6'],
  ['::ffff:8.8.8.8', 'allowed', 'allowed', 'IPv4-mapped public'],
  ['64:ff9b::5db8:d70e', 'allowed', 'allowed', 'NAT64 of 93.184.215.14'],
  ['2002:5db8:d70e::1', 'allowed', 'allowed', '6to4 of 93.184.215.14'],
  ['2001:0:4136:e378:8000:63bf:a247:28f1', 'allowed', 'allowed', 'Teredo, server 65.54.227.120, client 93.184.215.14'],
];

describe('createAddressPolicy: refuseAddress', () => {
  test.each([...REFUSED_ALWAYS, ...LOCAL, ...PUBLIC])('%s: %s without the switch, %s with it (%s)', (address, without, withSwitch) => {
    expect(verdict(strict.refuseAddress(address))).toBe(without);
    expect(verdict(local.refuseAddress(address))).toBe(withSwitch);
  });

  test('the reason names the address and the range that decided, the embedded IPv4 for a translation', () => {
    expect(strict.refuseAddress('127.0.0.1')).toBe('127.0.0.1 is a loopback address');
    expect(strict.refuseAddress('2002:7f00:1::')).toBe('2002:7f00:1:: is 6to4 of 127.0.0.1 (a loopback address)');
    expect(local.refuseAddress('64:ff9b::a00:1')).toBe('64:ff9b::a00:1 is NAT64 of 10.0.0.1 (a private (RFC 1918) address)');
    expect(local.refuseAddress('2001:0:4136:e378:8000:63bf:80ff:fffe')).toMatch(/Teredo of 127\.0\.0\.1/);
    expect(local.refuseAddress('169.254.169.254')).toMatch(/link-local/);
    expect(strict.refuseAddress('64:ff9b:1::7f00:1')).toMatch(/local-use NAT64/);
  });

  test('a name is not an address: refused as such, never taken for allowed', () => {
    expect(strict.refuseAddress('shop.example')).toMatch(/not an IP address/);
    expect(local.refuseAddress('')).toMatch(/not an IP address/);
  });

  test('the switch is reported', () => {
    expect([strict.allowPrivateNetworks, local.allowPrivateNetworks]).toEqual([false, true]);
  });
});

describe('createAddressPolicy: refuseHost (a URL host, before any lookup)', () => {
  test.each([...REFUSED_ALWAYS, ...LOCAL, ...PUBLIC].filter(([address]) => !address.includes('%')))('the URL form of %s is judged as the address', (address, without, withSwitch) => {
    const host = new URL(`https://${address.includes(':') ? `[${address}]` : address}/`).hostname;
    expect(verdict(strict.refuseHost(host))).toBe(without);
    expect(verdict(local.refuseHost(host))).toBe(withSwitch);
  });

  test('the forms URL() normalises to loopback are refused without the switch', () => {
    for (const raw of ['http://2130706433/', 'http://0x7f.1/', 'http://127.1/', 'http://[::127.0.0.1]/', 'http://[0:0:0:0:0:ffff:7f00:1]/']) {
      expect(strict.refuseHost(new URL(raw).hostname), raw).toBeDefined();
    }
  });

  test.each([
    ['localhost', 'refused', 'allowed'],
    ['LOCALHOST.', 'refused', 'allowed'],
    ['api.localhost', 'refused', 'allowed'],
    ['printer.local', 'refused', 'allowed'],
    ['db.internal', 'refused', 'allowed'],
    ['router.home.arpa', 'refused', 'allowed'],
    ['intranet', 'refused', 'allowed'],
    ['metadata.google.internal', 'refused', 'refused'],
    ['metadata', 'refused', 'refused'],
    ['instance-data.ec2.internal', 'refused', 'refused'],
    ['shop.example', 'allowed', 'allowed'],
    ['hooks.shop.example.', 'allowed', 'allowed'],
    ['localhost.shop.example', 'allowed', 'allowed'],
  ] as const)('name %s: %s without the switch, %s with it', (name, without, withSwitch) => {
    expect(verdict(strict.refuseHost(name))).toBe(without);
    expect(verdict(local.refuseHost(name))).toBe(withSwitch);
  });
});
