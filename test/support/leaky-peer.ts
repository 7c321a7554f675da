// An outside service that fails every call and quotes back the credentials it was sent, as some
// real ones do (OpenAI's 401 names the key it got, S3-compatible servers and proxies print the
// signature or the header they refused, an OAuth server may name the token it revoked). Each
// message holds every credential whole, and before them one more copy of the main credential
// placed so that a consumer keeping only the first 200 characters keeps the start of it: a
// clipped copy must be caught as well as a whole one.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LeakyCall {
  method: string;
  path: string;
  authorization: string | undefined;
  privateToken: string | undefined;
}

/** The credentials of a request, the one that matters most first (Basic auth decoded, the SigV4 key id). */
function presented(headers: IncomingHttpHeaders, query: string, body: string): string[] {
  const out: string[] = [];
  const auth = headers.authorization;
  if (auth) {
    const basic = /^Basic\s+(\S+)$/i.exec(auth);
    if (basic) out.push(Buffer.from(basic[1], 'base64').toString('utf8').split(':').slice(1).join(':'), Buffer.from(basic[1], 'base64').toString('utf8'));
    const bearer = /^Bearer\s+(\S+)$/i.exec(auth);
    if (bearer) out.push(bearer[1]);
    const akid = /Credential=([^/,\s]+)/.exec(auth);
    if (akid) out.push(akid[1]);
    out.push(auth);
  }
  for (const h of ['private-token', 'x-api-key', 'cookie'] as const) if (typeof headers[h] === 'string') out.unshift(headers[h] as string);
  // OAuth endpoints take their secrets in a form body (RFC 6749, RFC 7009).
  if (String(headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(body);
    for (const f of ['token', 'refresh_token', 'client_secret', 'code', 'code_verifier']) if (form.has(f)) out.push(`${f}=${form.get(f)}`);
    const token = form.get('token') ?? form.get('refresh_token');
    if (token) out.unshift(token);
  }
  if (query) out.push(query);
  return out;
}

/**
 * `lead`, then the first credential placed so that the first `window` characters of the message
 * end 28 characters into its random part (after its last `_`), then every credential whole. The
 * margin keeps 16 of them for consumers that clip a few characters sooner or later.
 */
export function quote(lead: string, creds: string[], window = 200): string {
  const first = creds[0] ?? '';
  const start = Math.max(lead.length + 1, window - (first.lastIndexOf('_') + 1 + 28));
  return `${lead.padEnd(start - 1, '.')} ${first} (sent: ${creds.join(' ')})`;
}

/** Characters before the message in `{"error":{"message":"...`: chat clients clip the raw body. */
const ERROR_PREFIX = JSON.stringify({ error: { message: '' } }).indexOf('""') + 1;

export async function startLeakyPeer() {
  const calls: LeakyCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://peer');
      calls.push({ method: req.method!, path: url.pathname, authorization: req.headers.authorization, privateToken: req.headers['private-token'] as string | undefined });
      const creds = presented(req.headers, url.search, Buffer.concat(chunks).toString('utf8'));
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if ((req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256')) {
        const message = quote('The request signature we calculated does not match the signature you provided', creds);
        return res.writeHead(400, { 'content-type': 'application/xml' }).end(`<Error><Code>InvalidRequest</Code><Message>${message}</Message></Error>`);
      }
      if (url.pathname.startsWith('/openai/')) return json(401, { error: { message: quote('Incorrect API key provided:', creds), type: 'invalid_request_error' } });
      if (url.pathname.startsWith('/rerank/')) return json(401, { message: quote('invalid api token', creds) });
      if (url.pathname.startsWith('/llm/')) return json(401, { error: { message: quote('Incorrect API key provided:', creds, 200 - ERROR_PREFIX), type: 'invalid_request_error' } });
      // Confluence, GitLab, Google, OAuth endpoints and anything else: a 400 that quotes what it refused.
      // `message` first: some consumers clip the raw body, some one field of it.
      const text = quote('Bad Request: refused credentials', creds, 200 - '{"message":"'.length);
      return json(400, { message: text, error: text, error_description: text, errorMessages: [text] });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
