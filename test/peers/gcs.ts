// A local server that speaks Google's token endpoint (the JWT-bearer grant of a service account,
// the signature checked against its public key; refresh tokens) and the Cloud Storage JSON API as
// @google-cloud/storage calls it: object lists (prefix, maxResults, nextPageToken) and media
// downloads. Bearer tokens it issued are required. Requests are recorded.
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startGoogle(opts: { pageSize?: number } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const email = 'reader@acme-project.iam.gserviceaccount.com';
  const buckets = new Map<string, Map<string, { bytes: Buffer; contentType: string; generation: number }>>();
  const tokens = new Set<string>();
  const refreshTokens = new Set<string>();
  const requests: { method: string; path: string }[] = [];
  const pageSize = opts.pageSize ?? 2;
  const server = createServer((req, res) => {
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
      return send(404, { error: { code: 404, message: `no route ${url.pathname} in this peer` } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    serviceAccount: JSON.stringify({ type: 'service_account', project_id: 'acme-project', private_key_id: 'k1', private_key: privateKey, client_email: email, token_uri: `${base}/token` }),
    buckets,
    refreshTokens,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
