// Rules sources apply before any byte moves: which addresses a source may reach (private,
// loopback, link-local and unspecified ones are refused, IPv4-mapped IPv6 judged as IPv4, and
// the check runs in the connection's own DNS lookup), and which files its glob patterns take.
import { createServer } from 'node:http';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { checkLiteralHost, guardedLookup, isPrivateAddress } from '../../dist/outbound/address-guard.js';
import { globMatcher } from '../../dist/ingest/connectors/globs.js';

describe('the private-address guard', () => {
  it('knows private, loopback, link-local and unspecified addresses, in IPv4 and IPv6', () => {
    const blocked = ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.254', '192.168.1.1', '127.0.0.1', '127.8.9.10', '169.254.169.254', '0.0.0.0', '100.64.0.1',
      '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.1.2.3', '::ffff:a9fe:a9fe'];
    const open = ['8.8.8.8', '172.15.255.255', '172.32.0.1', '192.169.0.1', '1.1.1.1', '100.128.0.1', '2001:4860:4860::8888', '2606:4700::1111', '::ffff:8.8.8.8', 'fec0::1'];
    for (const ip of blocked) expect(isPrivateAddress(ip), ip).toBe(true);
    for (const ip of open) expect(isPrivateAddress(ip), ip).toBe(false);
    expect(() => checkLiteralHost(new URL('http://[::1]:9000/'), false)).toThrow(/SABLE_ALLOW_PRIVATE_NETWORK=true/);
    expect(() => checkLiteralHost(new URL('http://169.254.169.254/latest/meta-data'), false)).toThrow(/169\.254\.169\.254/);
    expect(() => checkLiteralHost(new URL('http://127.0.0.1/'), true)).not.toThrow();
  });

  it('refuses a connection whose name resolves to a private address, and allows it when told to', async () => {
    const server = createServer((_req, res) => res.end('reached'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const get = (allow: boolean) =>
      new Promise<string>((resolve, reject) => {
        const req = request({ host: 'localhost', port, family: 4, lookup: guardedLookup(allow) }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c)).on('end', () => resolve(body));
        });
        req.on('error', reject).end();
      });
    try {
      await expect(get(false)).rejects.toThrow(/localhost resolves to 127\.0\.0\.1.*SABLE_ALLOW_PRIVATE_NETWORK=true/);
      expect(await get(true)).toBe('reached');
    } finally {
      server.close();
    }
  });
});

describe('glob patterns of source configs', () => {
  it('matches names for patterns without a slash and paths for patterns with one', () => {
    const m = globMatcher(['*.pdf', 'docs/**/*.md', 'notes/?.txt', '*.{csv,tsv}']);
    const yes = ['a.pdf', 'deep/in/tree/B.PDF', 'docs/x.md', 'docs/a/b/c.md', 'notes/1.txt', 'data/t.csv', 'x.tsv'];
    const no = ['a.pdfx', 'pdf', 'other/x.md', 'docs/x.markdown', 'notes/12.txt', 'notes/sub/1.txt', 'a.csv.gz'];
    for (const p of yes) expect(m(p), p).toBe(true);
    for (const p of no) expect(m(p), p).toBe(false);
    expect(globMatcher(['**/*'])('any/path/at/all.bin')).toBe(true);
    expect(globMatcher([])('a.pdf')).toBe(false);
  });
});
