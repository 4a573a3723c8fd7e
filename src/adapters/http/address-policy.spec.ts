import { describe, expect, test } from 'vitest';
import { isForbiddenAddress } from './address-policy.ts';

describe('isForbiddenAddress', () => {
  test.each([
    ['127.0.0.1', 'IPv4 loopback'],
    ['127.255.255.254', 'the rest of 127/8'],
    ['10.0.0.1', 'private 10/8'],
    ['10.255.255.255', 'private 10/8, last'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12, last'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local, cloud metadata'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast (reserved 240/4)'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fe80::1', 'IPv6 link-local'],
    ['fc00::1', 'IPv6 unique local'],
    ['fd12:3456:789a::1', 'IPv6 unique local (fd)'],
    ['ff02::1', 'IPv6 multicast'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::FFFF:169.254.169.254', 'IPv4-mapped metadata, upper case'],
    ['::ffff:a00:1', 'IPv4-mapped private in hex (how URL() writes [::ffff:10.0.0.1])'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
  ])('%s is forbidden (%s)', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  test.each([
    ['8.8.8.8', 'public IPv4'],
    ['1.1.1.1', 'public IPv4'],
    ['172.15.255.255', 'just below 172.16/12'],
    ['172.32.0.1', 'just above 172.16/12'],
    ['192.169.0.1', 'just above 192.168/16'],
    ['11.0.0.1', 'just above 10/8'],
    ['2001:4860:4860::8888', 'public IPv6'],
    ['2606:4700:4700::1111', 'public IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
  ])('%s is allowed (%s)', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  test('names are not addresses (they are judged once resolved)', () => {
    expect(isForbiddenAddress('localhost')).toBe(false);
    expect(isForbiddenAddress('shop.example')).toBe(false);
    expect(isForbiddenAddress('')).toBe(false);
  });
});
