/**
 * Sources fetch what their users point them at, so a source could be aimed at the service's own
 * network (metadata endpoints, internal admin ports). Unless the deployment allows private
 * networks, connections to private, loopback, link-local and unspecified addresses are refused:
 * the check runs inside the DNS lookup of each connection (so every redirect and every
 * re-resolution is checked, not a name resolved once), and on literal addresses before connecting.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

export const ALLOW_PRIVATE_SETTING = 'SABLE_ALLOW_PRIVATE_NETWORK=true (flag --allow-private-network)';

export class PrivateAddressError extends Error {
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a private or local address; sources may reach such addresses only when the service runs with ${ALLOW_PRIVATE_SETTING}`);
  }
}

/** [first address as bigint, prefix length] per blocked range. */
const V4: [string, number][] = [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16]];
const V6: [string, number][] = [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10]];

function v4(ip: string): bigint {
  return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function v6(ip: string): bigint {
  let text = ip.split('%')[0];
  // An embedded IPv4 tail (::ffff:10.0.0.1) as two hex groups.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const n = v4(tail[1]);
    text = text.slice(0, -tail[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const a = head ? head.split(':') : [];
  const b = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const groups = rest === undefined ? a : [...a, ...Array(8 - a.length - b.length).fill('0'), ...b];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

function within(value: bigint, bits: number, [base, prefix]: [string, number], parse: (s: string) => bigint): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === parse(base) >> shift;
}

export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 4) return V4.some((r) => within(v4(ip), 32, r, v4));
  if (isIP(ip) === 6) {
    const value = v6(ip);
    // IPv4-mapped addresses are judged as the IPv4 address they carry.
    if (value >> 32n === 0xffffn) return isPrivateAddress([24n, 16n, 8n, 0n].map((s) => Number((value >> s) & 0xffn)).join('.'));
    return V6.some((r) => within(value, 128, r, v6));
  }
  return false;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http(s).request that refuses private addresses unless allowed. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  const lookup = (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const blocked = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (blocked) return callback(Object.assign(new PrivateAddressError(hostname, blocked.address), { code: 'EPRIVATE' }), []);
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
  return lookup as LookupFunction;
}

/** Refuses a URL whose host is a literal private address (no lookup happens for those). */
export function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) && isPrivateAddress(host)) throw new PrivateAddressError(url.hostname, host);
}
