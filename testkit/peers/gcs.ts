// A local server that speaks Google's token endpoint (the JWT-bearer grant of a service account,
// the signature checked against its public key; refresh tokens), the Cloud Storage JSON API as
// @google-cloud/storage calls it (object lists by prefix, paged; media downloads) and the Drive
// API v3 as @googleapis/drive calls it (files by parent folder, paged; media; exports of Google
// Docs and Sheets). Bearer tokens it issued are required. Requests are recorded.
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  parent: string;
  drive?: string;
  content: string;
  version: number;
}

export async function startGoogle(opts: { pageSize?: number; latencyMs?: number } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const email = 'reader@acme-project.iam.gserviceaccount.com';
  const buckets = new Map<string, Map<string, { bytes: Buffer; contentType: string; generation: number }>>();
  const driveFiles: DriveFile[] = [];
  const tokens = new Set<string>();
  const refreshTokens = new Set<string>();
  const requests: { method: string; path: string }[] = [];
  const pageSize = opts.pageSize ?? 2;
  const server = createServer((req, res) => void delay(opts.latencyMs).then(() => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://peer');
      requests.push({ method: req.method!, path: url.pathname + url.search });
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (url.pathname === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        const issue = () => {
          const token = `ya29.${randomBytes(16).toString('hex')}`;
          tokens.add(token);
          return send(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
        };
        if (form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
          const [h, p, s] = (form.get('assertion') ?? '').split('.');
          const ok = !!s && verify('RSA-SHA256', Buffer.from(`${h}.${p}`), createPublicKey(publicKey), Buffer.from(s, 'base64url'));
          const claims = ok ? JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) : {};
          if (!ok || claims.iss !== email || claims.aud !== `${base}/token`) return send(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
          return issue();
        }
        if (form.get('grant_type') === 'refresh_token' && refreshTokens.has(form.get('refresh_token') ?? '')) return issue();
        return send(400, { error: 'invalid_grant', error_description: 'Bad Request' });
      }
      if (!tokens.has((req.headers.authorization ?? '').replace(/^Bearer /, ''))) return send(401, { error: { code: 401, message: 'Invalid Credentials' } });
      const list = /^\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
      if (list) {
        const bucket = buckets.get(list[1]);
        if (!bucket) return send(404, { error: { code: 404, message: 'The specified bucket does not exist.' } });
        const prefix = url.searchParams.get('prefix') ?? '';
        const names = [...bucket.keys()].filter((n) => n.startsWith(prefix)).sort();
        const start = Number(url.searchParams.get('pageToken') ?? 0);
        const per = Math.min(Number(url.searchParams.get('maxResults') ?? 1000), pageSize);
        const items = names.slice(start, start + per).map((name) => {
          const o = bucket.get(name)!;
          return { kind: 'storage#object', name, bucket: list[1], size: String(o.bytes.length), contentType: o.contentType, md5Hash: createHash('md5').update(o.bytes).digest('base64'), generation: String(o.generation), updated: new Date().toISOString() };
        });
        return send(200, { kind: 'storage#objects', items, ...(start + per < names.length ? { nextPageToken: String(start + per) } : {}) });
      }
      const media = /^\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(url.pathname);
      if (media && url.searchParams.get('alt') === 'media') {
        const o = buckets.get(media[1])?.get(decodeURIComponent(media[2]));
        if (!o) return send(404, { error: { code: 404, message: 'No such object' } });
        return res.writeHead(200, { 'content-type': o.contentType, 'content-length': String(o.bytes.length) }).end(o.bytes);
      }
      if (url.pathname.startsWith('/drive/v3/files')) return drive(url, res, send);
      return send(404, { error: { code: 404, message: `no route ${url.pathname} in this peer` } });
    });
  }));
  const drive = (url: URL, res: import('node:http').ServerResponse, send: (status: number, body: unknown) => void) => {
    const json = (f: DriveFile) => ({ id: f.id, name: f.name, mimeType: f.mimeType, version: String(f.version), modifiedTime: new Date().toISOString(), webViewLink: `${base}/view/${f.id}`, ...(f.mimeType.startsWith('application/vnd.google-apps.') ? {} : { size: String(Buffer.byteLength(f.content)), md5Checksum: createHash('md5').update(f.content).digest('hex') }) });
    if (url.pathname === '/drive/v3/files') {
      const m = /^'([^']+)' in parents and trashed = false$/.exec(url.searchParams.get('q') ?? '');
      if (!m) return send(400, { error: { code: 400, message: 'Invalid Value' } });
      const children = driveFiles.filter((f) => f.parent === m[1] && (!url.searchParams.get('driveId') || f.drive === url.searchParams.get('driveId')));
      const start = Number(url.searchParams.get('pageToken') ?? 0);
      const per = Math.min(Number(url.searchParams.get('pageSize') ?? 100), pageSize);
      return send(200, { files: children.slice(start, start + per).map(json), ...(start + per < children.length ? { nextPageToken: String(start + per) } : {}) });
    }
    const one = /^\/drive\/v3\/files\/([^/]+)(\/export)?$/.exec(url.pathname);
    const f = one ? driveFiles.find((x) => x.id === one[1]) : undefined;
    if (!one || !f) return send(404, { error: { code: 404, message: 'File not found' } });
    if (one[2]) {
      if (!f.mimeType.startsWith('application/vnd.google-apps.')) return send(403, { error: { code: 403, message: 'Export only supports Docs Editors files.' } });
      return res.writeHead(200, { 'content-type': url.searchParams.get('mimeType') ?? 'text/plain' }).end(f.content);
    }
    if (url.searchParams.get('alt') === 'media') {
      if (f.mimeType.startsWith('application/vnd.google-apps.')) return send(403, { error: { code: 403, message: 'Only files with binary content can be downloaded. Use Export with Docs Editors files.' } });
      return res.writeHead(200, { 'content-type': f.mimeType }).end(f.content);
    }
    return send(200, json(f));
  };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    serviceAccount: JSON.stringify({ type: 'service_account', project_id: 'acme-project', private_key_id: 'k1', private_key: privateKey, client_email: email, token_uri: `${base}/token` }),
    buckets,
    driveFiles,
    refreshTokens,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The answer delay of a peer standing in for a distant service (benchmarks). */
function delay(ms: number | undefined): Promise<void> {
  return ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}
