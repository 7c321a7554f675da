/**
 * The dashboard's page and assets (built by tools/build-dashboard.mjs into dist/dashboard/),
 * served on the API's port outside the route table: they take no key (the page's data calls
 * carry it) and are no part of the API, so /openapi.json does not list them.
 *
 * Only the files the build wrote are served, looked up by their exact path in a table read from
 * the directory: no request path ever reaches the file system, so `..`, encoded or not, finds
 * nothing. The table is read again when index.html changes (a rebuild while the service runs).
 * Hashed assets are immutable for a year; index.html is revalidated on each load (its ETag), so
 * a rebuild reaches the browser at the next load. A `.gz` the build wrote beside a file is sent
 * to callers that accept gzip.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { json, type Request, type Response } from './types.js';

/** The page may load and call only its own origin, and no page may frame it. */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

const PREFIX = '/dashboard/';
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
  cache: string;
}

export interface DashboardAnswer {
  response: Response;
  pattern: string;
  requestId: string;
}

export class DashboardAssets {
  private assets = new Map<string, Asset>();
  /** index.html's modification time when the table was read (0: not built). */
  private builtAt = -1;

  /** `dir`: the build's output, dist/dashboard/ beside the compiled service by default. */
  constructor(private readonly dir: string = fileURLToPath(new URL('../../dashboard/', import.meta.url))) {}

  /** The answer to a request for the page or its assets (and `/`, which leads to it), or undefined for any other path. */
  answer(req: Request): DashboardAnswer | undefined {
    const { method, path } = req;
    if (path === '/' && method === 'GET') return done(redirect(PREFIX), '/');
    if (path !== '/dashboard' && !path.startsWith(PREFIX)) return undefined;
    if (method !== 'GET') return done(json(405, { error: 'method_not_allowed', message: `${method} is not allowed here (allowed: GET)` }, { allow: 'GET' }), '/dashboard/*');
    if (path === '/dashboard') return done(redirect(PREFIX), '/dashboard');
    this.refresh();
    if (this.builtAt === 0) return done(notBuilt(), '/dashboard/*');
    const asset = this.assets.get(path === PREFIX ? `${PREFIX}index.html` : path);
    if (!asset) return done(json(404, { error: 'not_found', message: `the dashboard has no file ${path}` }), '/dashboard/*');
    return done(send(asset, req.headers), '/dashboard/*');
  }

  /** Reads the table again when index.html changed, or is gone. */
  private refresh(): void {
    const mtime = statSync(join(this.dir, 'index.html'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (mtime === this.builtAt) return;
    this.assets = mtime === 0 ? new Map() : readAssets(this.dir);
    this.builtAt = mtime;
  }
}

function readAssets(dir: string): Map<string, Asset> {
  const out = new Map<string, Asset>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith('.gz')) continue;
    const file = join(entry.parentPath, entry.name);
    const body = readFileSync(file);
    const urlPath = PREFIX + relative(dir, file).split(sep).join('/');
    const isIndex = urlPath === `${PREFIX}index.html`;
    out.set(urlPath, {
      type: TYPES[extname(entry.name)] ?? 'application/octet-stream',
      body,
      gzip: existsSync(`${file}.gz`) ? readFileSync(`${file}.gz`) : gzipSync(body, { level: 9 }),
      etag: createHash('sha256').update(body).digest('base64url').slice(0, 22),
      // Every other file's name carries its content's hash.
      cache: isIndex ? 'no-cache' : IMMUTABLE,
    });
  }
  return out;
}

function send(asset: Asset, headers: Record<string, string>): Response {
  const gzip = acceptsGzip(headers['accept-encoding']);
  // Each encoding is its own representation, with its own tag.
  const etag = `"${asset.etag}${gzip ? '-gz' : ''}"`;
  const common = { ...PAGE_HEADERS, 'cache-control': asset.cache, etag, vary: 'Accept-Encoding' };
  if (matches(headers['if-none-match'], etag)) return { status: 304, headers: common };
  return {
    status: 200,
    headers: { ...common, 'content-type': asset.type, ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
    body: gzip ? asset.gzip : asset.body,
  };
}

/** Accept-Encoding names gzip (or `*`) without q=0. */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    return !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
  });
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

function redirect(location: string): Response {
  return { status: 302, headers: { location, 'cache-control': 'no-cache' } };
}

/** Where the build has not run: a page that says what to run, not a bare 404. */
function notBuilt(): Response {
  const page =
    '<!doctype html><html lang="en"><meta charset="utf-8"><title>Sable dashboard not built</title>' +
    '<h1>The dashboard is not built</h1><p>Run <code>npm run build:dashboard</code> (or <code>npm install</code>) and reload this page. The API serves as usual.</p></html>';
  return { status: 503, headers: { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }, body: page };
}

function done(response: Response, pattern: string): DashboardAnswer {
  const requestId = randomUUID();
  response.headers = { ...response.headers, 'x-request-id': requestId };
  return { response, pattern, requestId };
}
