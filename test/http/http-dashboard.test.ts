// The dashboard routes over real HTTP: a session token from an API key (refused on API routes,
// API keys refused on dashboard routes, revoking the key ends its sessions), and item previews
// through the same connectors and the organization's sources: s3:// on the local S3 server,
// gdrive:// on the local Drive peer (metadata and streamed bytes, a Google Doc exported),
// https:// on a local site; batch-info; addresses no source can read.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { S3Client } from '../../dist/outbound/s3-client.js';
import { startGoogle } from '../../testkit/peers/gcs.js';
import { ingestClient } from '../support/ingest.js';
import { startS3, S3_KEY, S3_SECRET, type LocalS3 } from '../../testkit/s3.js';

const CLI = join(__dirname, '..', '..', 'dist', 'control-plane', 'cli.js');

describe('dashboard routes', () => {
  let dir: string;
  let svc: Service;
  let s3: LocalS3;
  let google: Awaited<ReturnType<typeof startGoogle>>;
  let site: ReturnType<typeof createServer>;
  let siteUrl: string;
  const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);
  let token: string;
  const dash = (method: string, path: string, body?: unknown, bearer = token) =>
    fetch(svc.url + path, { method, headers: { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });

  beforeAll(async () => {
    s3 = await startS3('reports');
    const bucket = new S3Client({ endpoint: s3.endpoint, bucket: 'reports', region: 'us-east-1', accessKeyId: S3_KEY, secretAccessKey: S3_SECRET });
    const body = Buffer.from('Quarterly revenue grew nine percent.');
    const put = await bucket.send('PUT', 'q3/summary.txt', { headers: { 'content-type': 'text/plain', 'content-length': String(body.length) }, body: Readable.from([body]) });
    put.resume();
    google = await startGoogle();
    google.driveFiles.push(
      { id: 'doc-1', name: 'Roadmap', mimeType: 'application/vnd.google-apps.document', parent: 'root', content: 'Ship search v2 in spring.', version: 2 },
      { id: 'pdf-1', name: 'scan.txt', mimeType: 'text/plain', parent: 'root', content: 'A plain text scan.', version: 1 },
    );
    site = createServer((req, res) => {
      if (req.url === '/guide.html') return void res.writeHead(200, { 'content-type': 'text/html', 'content-length': '27', 'last-modified': 'Tue, 03 Nov 2026 10:00:00 GMT' }).end('<html><p>guide</p></html>\n\n');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'sable-dash-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'allow-private-network': 'true', 'gdrive-api-url': `${google.url}/`, 'google-token-url': `${google.url}/token` }, {}));
    const created = [
      await api.call('POST', '/ingestion/sources', { source_type: 's3', name: 'reports', config: { bucket: 'reports', endpoint: s3.endpoint, access_key_id: S3_KEY, secret_access_key: S3_SECRET } }),
      await api.call('POST', '/ingestion/sources', { source_type: 'gdrive', name: 'drive', config: { folder_ids: ['root'], service_account_json: google.serviceAccount } }),
    ];
    for (const c of created) expect(c.status, JSON.stringify(c.body)).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await s3?.stop();
    await google?.close();
    await new Promise<void>((r) => site.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('issues session tokens; API keys and session tokens each work on their own routes only', async () => {
    const s = await api.call('POST', '/auth/sessions');
    expect(s.status).toBe(201);
    token = s.body.token;
    expect(Date.parse(s.body.expires_at)).toBeGreaterThan(Date.now());
    expect(s.body).toMatchObject({ role: 'admin', org_id: expect.any(String) });
    expect((await dash('GET', `/sources/info?source_path=${encodeURIComponent(`${siteUrl}/guide.html`)}`)).status).toBe(200);
    const withKey = await fetch(`${svc.url}/sources/info?source_path=x`, { headers: { 'x-api-key': svc.createdAdminKey! } });
    expect(withKey.status).toBe(401);
    expect((await withKey.json()).message).toContain('session token');
    expect((await dash('GET', '/datasets')).status).toBe(401);
    expect((await dash('GET', '/sources/info?source_path=x', undefined, token.slice(0, -2) + 'xx')).status).toBe(401);
  });

  it('describes s3://, gdrive:// and https:// items through the sources that read them', async () => {
    const s3Info = await (await dash('GET', `/sources/info?source_path=${encodeURIComponent('s3://reports/q3/summary.txt')}`)).json();
    expect(s3Info).toMatchObject({ source_path: 's3://reports/q3/summary.txt', name: 'summary.txt', size: 36, readable: true });
    expect(s3Info.content_type).toContain('text/plain');
    const doc = await (await dash('GET', '/sources/info?source_path=gdrive://doc-1')).json();
    expect(doc).toMatchObject({ name: 'Roadmap', content_type: 'text/plain', readable: true });
    const web = await (await dash('GET', `/sources/info?source_path=${encodeURIComponent(`${siteUrl}/guide.html`)}`)).json();
    expect(web).toMatchObject({ name: 'guide.html', size: 27, content_type: 'text/html', modified_at: '2026-11-03T10:00:00.000Z', readable: true });
    const batch = await (await dash('POST', '/sources/batch-info', { source_paths: ['s3://reports/q3/missing.txt', 's3://other-bucket/x.txt', 'gdrive://pdf-1', 'ftp://nope/x'] })).json();
    expect(batch.results.map((r: { readable: boolean }) => r.readable)).toEqual([false, false, true, false]);
    expect(batch.results[1].error).toBe('no s3 source of this organization reads bucket other-bucket');
    expect(batch.results[3].error).toContain('scheme ftp:');
    expect((await dash('GET', '/sources/info')).status).toBe(400);
  });

  it('streams a Drive file (a Google Doc exported as text); an unreadable one is 410', async () => {
    const res = await dash('GET', '/sources/stream/gdrive/doc-1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toBe('Ship search v2 in spring.');
    const missing = await dash('GET', '/sources/stream/gdrive/nope');
    expect(missing.status).toBe(410);
    expect((await missing.json()).error).toBe('document_unavailable');
  });

  it('revoking the API key ends its sessions', async () => {
    const member = JSON.parse(execFileSync(process.execPath, [CLI, 'keys', 'create', '--org', 'default', '--role', 'member', '--data-dir', dir]).toString());
    const s = await api.call('POST', '/auth/sessions', undefined, member.key);
    expect((await dash('GET', '/sources/info?source_path=gdrive://pdf-1', undefined, s.body.token)).status).toBe(200);
    execFileSync(process.execPath, [CLI, 'keys', 'revoke', member.key_id, '--data-dir', dir]);
    expect((await dash('GET', '/sources/info?source_path=gdrive://pdf-1', undefined, s.body.token)).status).toBe(401);
  });

  it('signs out: DELETE /auth/sessions ends that token only, and an API key cannot end one', async () => {
    // Opened at once (likely in one millisecond): still two tokens, ended apart.
    const [first, second] = (await Promise.all([api.call('POST', '/auth/sessions'), api.call('POST', '/auth/sessions')])).map((r) => r.body.token);
    expect(first).not.toBe(second);
    expect((await fetch(`${svc.url}/auth/sessions`, { method: 'DELETE', headers: { 'x-api-key': svc.createdAdminKey! } })).status).toBe(401);
    expect((await dash('DELETE', '/auth/sessions', undefined, first)).status).toBe(204);
    expect((await dash('GET', '/sources/info?source_path=gdrive://pdf-1', undefined, first)).status).toBe(401);
    expect((await dash('DELETE', '/auth/sessions', undefined, first)).status).toBe(401);
    expect((await dash('GET', '/sources/info?source_path=gdrive://pdf-1', undefined, second)).status).toBe(200);
  });
});
