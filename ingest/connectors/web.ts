/**
 * Web crawls: from `start_urls`, breadth first to `max_depth`, at most `max_pages` pages, within
 * `allowed_domains` (default: the start URLs' hosts and their subdomains), with the source's
 * `headers`. robots.txt is obeyed (and its Crawl-delay), requests to one host are spaced by the
 * politeness delay, a page's canonical URL is its identity (one document however it is reached),
 * `noindex` pages are followed but not ingested, `nofollow` ones not followed. Linked documents
 * (PDF, DOCX...) are ingested too with `include_assets`, at most `max_assets_per_page` a page.
 * Every request, redirects included, passes the private-address guard.
 *
 * Pages are read while listing (their links are needed to go on): their bytes are kept on disk
 * for the job, so a page is downloaded once a run. A page's version is its ETag or
 * Last-Modified, else the hash of its bytes, so an unchanged page is not parsed nor embedded again.
 */
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { open, readBody, WebError, USER_AGENT } from '../../outbound/web-client.js';
import type { StagedFile } from '../../objects/object-store.js';
import type { ParsePool } from '../parse/parse-pool.js';
import type { Connector, ConnectorContext, ItemInfo, ItemRef, SourceItem, Validation } from './connector.js';
import { mediaTypeOf } from './media-types.js';
import { ALLOW_ALL, DISALLOW_ALL, parseRobots, type Robots } from './robots.js';
import { stageBytes, stageStream } from './staging.js';

interface WebConfig {
  start_urls: string[];
  max_depth: number;
  max_pages: number;
  allowed_domains: string[];
  include_assets: boolean;
  max_assets_per_page: number;
  headers: Record<string, string>;
}

export interface WebOptions {
  stagingDir: string;
  allowPrivateNetwork: boolean;
  parse: ParsePool;
  /** Least time between two requests to one host (robots.txt may ask for more). */
  politenessMs: number;
  /** Largest page read, bytes. */
  maxPageBytes?: number;
}

const ASSET = /\.(pdf|docx|xlsx|csv|txt|md|markdown|json|xml|rtf|odt|pptx)$/i;
const HTML = /^(text\/html|application\/xhtml\+xml)/i;
const MB = 1024 * 1024;
/** Pages of one crawl in flight at once. */
const CONCURRENCY = 4;

interface Visit {
  items: SourceItem[];
  links: { url: string; depth: number }[];
}

export class WebConnector implements Connector {
  readonly type = 'web' as const;
  readonly retainsOriginals = false;
  /** Bytes of pages read while listing, by source and item id, until fetched or the job ends. */
  private readonly staged = new Map<string, string>();

  constructor(private readonly o: WebOptions) {}

  async *list(ctx: ConnectorContext): AsyncIterable<SourceItem> {
    yield* new Crawl(this.o, ctx, ctx.config as unknown as WebConfig, (id, path) => this.staged.set(key(ctx, id), path)).run();
  }

  async fetch(ctx: ConnectorContext, item: ItemRef): Promise<StagedFile> {
    const id = item.item?.id ?? item.file_path;
    const kept = this.staged.get(key(ctx, id));
    if (kept) {
      this.staged.delete(key(ctx, id));
      return { path: kept, release: () => rm(kept, { force: true }) };
    }
    const c = ctx.config as unknown as WebConfig;
    const { res } = await open('GET', item.item?.url ?? id, { headers: c.headers, signal: ctx.signal, allowPrivate: this.o.allowPrivateNetwork });
    if (res.statusCode !== 200) {
      res.resume();
      throw new WebError(`${item.item?.url ?? id} answered ${res.statusCode}`, res.statusCode ?? null);
    }
    return stageStream(res, this.o.stagingDir, this.maxBytes(), ctx.signal);
  }

  async validate(ctx: ConnectorContext): Promise<Validation> {
    const c = ctx.config as unknown as WebConfig;
    const warnings: string[] = [];
    const samples: Validation['samples'] = [];
    const crawl = new Crawl(this.o, ctx, { ...c, max_pages: 1, max_depth: 1 }, () => undefined);
    const allowed: URL[] = [];
    for (const start of c.start_urls) {
      const url = new URL(start);
      if ((await crawl.robotsOf(url)).allowed(url.pathname + url.search)) allowed.push(url);
      else warnings.push(`robots.txt of ${url.origin} disallows ${url.pathname}: it will not be crawled`);
    }
    // A page robots.txt disallows is not read, not even to validate.
    if (allowed.length === 0) return { samples, warnings };
    const first = allowed[0];
    const { url, res } = await open('GET', first.href, { headers: c.headers, signal: ctx.signal, allowPrivate: this.o.allowPrivateNetwork });
    if (res.statusCode !== 200) {
      res.resume();
      throw new WebError(`${first.href} answered ${res.statusCode}`, res.statusCode ?? null);
    }
    if (!HTML.test(String(res.headers['content-type'] ?? ''))) {
      res.resume();
      warnings.push(`${url.href} is not an HTML page (${res.headers['content-type'] ?? 'no content type'}): it is ingested as a document, no links are followed`);
      return { samples: [{ title: url.pathname, url: url.href }], warnings };
    }
    const page = await this.o.parse.links((await readBody(res, this.o.maxPageBytes ?? 10 * MB)).toString('utf8'), url.href);
    samples.push({ title: page.title ?? url.pathname, url: page.canonical ?? url.href });
    const inScope = page.links.filter((l) => crawl.inDomain(new URL(l)));
    for (const l of inScope.slice(0, 4)) samples.push({ title: new URL(l).pathname, url: l });
    if (inScope.length === 0 && c.max_depth > 0) warnings.push(`${url.href} links to no page within ${crawl.domains.join(', ')}: only it will be ingested`);
    if (page.noindex) warnings.push(`${url.href} asks not to be indexed (robots meta noindex)`);
    return { samples, warnings };
  }

  async describe(ctx: ConnectorContext, uri: URL): Promise<ItemInfo> {
    const c = ctx.config as unknown as Partial<WebConfig>;
    const name = decodeURIComponent(uri.pathname.split('/').filter(Boolean).at(-1) ?? '') || uri.hostname;
    try {
      const { res } = await open('HEAD', uri.href, { headers: c.headers ?? {}, signal: ctx.signal, allowPrivate: this.o.allowPrivateNetwork });
      res.resume();
      if (res.statusCode !== 200) return { name, size: null, content_type: null, modified_at: null, readable: false, error: `${uri.href} answered ${res.statusCode}` };
      const modified = res.headers['last-modified'];
      const size = Number(res.headers['content-length']);
      return { name, size: Number.isFinite(size) ? size : null, content_type: res.headers['content-type'] ? String(res.headers['content-type']).split(';')[0] : null, modified_at: modified ? new Date(modified).toISOString() : null, readable: true };
    } catch (e) {
      return { name, size: null, content_type: null, modified_at: null, readable: false, error: (e as Error).message };
    }
  }

  maxBytes(): number {
    return 100 * MB;
  }

  async finished(ctx: ConnectorContext): Promise<void> {
    const prefix = key(ctx, '');
    for (const [k, path] of this.staged) {
      if (!k.startsWith(prefix)) continue;
      this.staged.delete(k);
      await rm(path, { force: true });
    }
  }
}

function key(ctx: ConnectorContext, id: string): string {
  return `${ctx.sourceId}\u0000${id}`;
}

/** One crawl of a source: the frontier, what was seen, robots and politeness per host. */
class Crawl {
  readonly domains: string[];
  private readonly robots = new Map<string, Promise<Robots>>();
  private readonly nextAt = new Map<string, number>();

  constructor(
    private readonly o: WebOptions,
    private readonly ctx: ConnectorContext,
    private readonly c: WebConfig,
    private readonly keep: (id: string, path: string) => void,
  ) {
    this.domains = (c.allowed_domains.length ? c.allowed_domains : c.start_urls.map((u) => new URL(u).hostname)).map((d) => d.toLowerCase().replace(/^\*?\./, ''));
  }

  inDomain(url: URL): boolean {
    const host = url.hostname.toLowerCase();
    return this.domains.some((d) => host === d || host.endsWith(`.${d}`));
  }

  /**
   * Breadth first, CONCURRENT pages in flight (requests to one host still spaced by the
   * politeness delay): each visit yields its items and the links it found for the frontier.
   */
  async *run(): AsyncIterable<SourceItem> {
    const frontier: { url: string; depth: number }[] = [];
    const seen = new Set<string>();
    const emitted = new Set<string>();
    for (const u of this.c.start_urls) {
      const n = normalize(u);
      if (!seen.has(n)) frontier.push({ url: n, depth: 0 }), seen.add(n);
    }
    const crawl = { pages: 0, reached: 0, errors: [] as string[] };
    const inFlight = new Map<number, Promise<{ id: number; out: Visit }>>();
    let next = 0;
    while (frontier.length > 0 || inFlight.size > 0) {
      while (frontier.length > 0 && inFlight.size < CONCURRENCY && crawl.pages + inFlight.size < this.c.max_pages) {
        const id = next++;
        const { url, depth } = frontier.shift()!;
        inFlight.set(id, this.visit(url, depth, crawl, seen, emitted).then((out) => ({ id, out })));
      }
      if (inFlight.size === 0) break;
      const { id, out } = await Promise.race(inFlight.values());
      inFlight.delete(id);
      yield* out.items;
      if (crawl.pages < this.c.max_pages) frontier.push(...out.links);
    }
    // A crawl that reached nothing failed; one that reached some pages goes on without the others.
    if (crawl.reached === 0) throw new WebError(`no start URL could be read: ${crawl.errors.slice(0, 3).join('; ') || 'robots.txt disallows them'}`, null);
  }

  /** One page: its item (kept on disk for the job), its linked documents, and the pages it links to. */
  private async visit(url: string, depth: number, crawl: { pages: number; reached: number; errors: string[] }, seen: Set<string>, emitted: Set<string>): Promise<Visit> {
    const none: Visit = { items: [], links: [] };
    const target = new URL(url);
    if (!(await this.robotsOf(target)).allowed(target.pathname + target.search)) return none;
    await this.polite(target);
    let got: Awaited<ReturnType<typeof open>>;
    try {
      got = await open('GET', url, { headers: this.c.headers, signal: this.ctx.signal, allowPrivate: this.o.allowPrivateNetwork });
    } catch (e) {
      if (this.ctx.signal.aborted) throw e;
      crawl.errors.push(`${url}: ${(e as Error).message}`);
      return none;
    }
    const { res } = got;
    const final = new URL(normalize(got.url.href));
    if (res.statusCode !== 200 || !this.inDomain(final)) {
      res.resume();
      crawl.errors.push(`${url}: ${res.statusCode !== 200 ? `answered ${res.statusCode}` : `redirected out of the allowed domains to ${final.host}`}`);
      return none;
    }
    crawl.reached++;
    const type = String(res.headers['content-type'] ?? mediaTypeOf(final.pathname));
    const version = changeSignal(res.headers);
    if (!HTML.test(type)) {
      // A document where a page was expected (a start URL that is a PDF): ingested as it is.
      const staged = await stageStream(res, this.o.stagingDir, 100 * MB, this.ctx.signal);
      if (emitted.has(final.href)) {
        await staged.release();
        return none;
      }
      emitted.add(final.href);
      this.keep(final.href, staged.path);
      return { items: [item(final, type.split(';')[0].trim(), null, version)], links: [] };
    }
    const body = await readBody(res, this.o.maxPageBytes ?? 10 * MB);
    crawl.pages++;
    const page = await this.o.parse.links(body.toString('utf8'), final.href);
    const canonical = page.canonical && this.inDomain(new URL(page.canonical)) ? normalize(page.canonical) : final.href;
    const out: Visit = { items: [], links: [] };
    if (canonical !== final.href) {
      // The page says it is a copy of another: that page is the document, read in its own turn
      // (with pages in flight, the copy may arrive first; its title and version are not the page's).
      if (!seen.has(canonical)) {
        seen.add(canonical);
        out.links.push({ url: canonical, depth });
      }
    } else if (!page.noindex && !emitted.has(canonical)) {
      emitted.add(canonical);
      this.keep(canonical, (await stageBytes(body, this.o.stagingDir)).path);
      out.items.push({ ...item(new URL(canonical), 'text/html', page.title, version ?? sha256(body)), size: body.length });
    }
    if (page.nofollow || depth >= this.c.max_depth) return out;
    let assets = 0;
    for (const link of page.links) {
      const u = new URL(normalize(link));
      if (!this.inDomain(u) || seen.has(u.href)) continue;
      seen.add(u.href);
      if (ASSET.test(u.pathname)) {
        if (!this.c.include_assets || assets >= this.c.max_assets_per_page) continue;
        assets++;
        const asset = await this.asset(u);
        if (asset && !emitted.has(asset.id)) {
          emitted.add(asset.id);
          out.items.push(asset);
        }
        continue;
      }
      out.links.push({ url: u.href, depth: depth + 1 });
    }
    return out;
  }

  /** A linked document, known by a HEAD (its type, size and change signal); fetched with the job's files. */
  private async asset(u: URL): Promise<SourceItem | null> {
    if (!(await this.robotsOf(u)).allowed(u.pathname + u.search)) return null;
    await this.polite(u);
    try {
      const { url, res } = await open('HEAD', u.href, { headers: this.c.headers, signal: this.ctx.signal, allowPrivate: this.o.allowPrivateNetwork });
      res.resume();
      if (res.statusCode !== 200 || !this.inDomain(url)) return null;
      const type = String(res.headers['content-type'] ?? '').split(';')[0].trim();
      const size = Number(res.headers['content-length']);
      return { ...item(url, type && type !== 'application/octet-stream' ? type : mediaTypeOf(url.pathname), null, changeSignal(res.headers)), size: Number.isFinite(size) ? size : null };
    } catch (e) {
      if (this.ctx.signal.aborted) throw e;
      return null;
    }
  }

  robotsOf(url: URL): Promise<Robots> {
    let r = this.robots.get(url.origin);
    if (!r) {
      r = (async () => {
        try {
          const { res } = await open('GET', `${url.origin}/robots.txt`, { headers: this.c.headers, signal: this.ctx.signal, allowPrivate: this.o.allowPrivateNetwork, retries: 0 });
          const status = res.statusCode ?? 0;
          if (status >= 500) return res.resume(), DISALLOW_ALL;
          if (status !== 200) return res.resume(), ALLOW_ALL;
          return parseRobots((await readBody(res, 512 * 1024)).toString('utf8'), USER_AGENT);
        } catch {
          return ALLOW_ALL;
        }
      })();
      this.robots.set(url.origin, r);
    }
    return r;
  }

  /** Waits until the host may be asked again: the politeness delay, or robots.txt's Crawl-delay. */
  private async polite(url: URL): Promise<void> {
    const robots = await this.robotsOf(url);
    const gap = Math.max(this.o.politenessMs, (robots.crawlDelay ?? 0) * 1000);
    const now = Date.now();
    const at = Math.max(now, this.nextAt.get(url.host) ?? 0);
    this.nextAt.set(url.host, at + gap);
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }
}

function item(url: URL, contentType: string, title: string | null, version: string | null): SourceItem {
  const last = decodeURIComponent(url.pathname.split('/').filter(Boolean).at(-1) ?? '') || url.hostname;
  return { id: url.href, name: title ?? last, path: url.pathname + url.search, url: url.href, contentType, size: null, version };
}

/** The URL a page is known by: no fragment, lower-case host, no default port. */
function normalize(u: string): string {
  const url = new URL(u);
  url.hash = '';
  return url.href;
}

function changeSignal(headers: Record<string, string | string[] | undefined>): string | null {
  const etag = headers.etag;
  if (typeof etag === 'string' && etag !== '') return `etag:${etag}`;
  const modified = headers['last-modified'];
  return typeof modified === 'string' && modified !== '' ? `modified:${modified}` : null;
}

function sha256(b: Buffer): string {
  return `sha256:${createHash('sha256').update(b).digest('hex')}`;
}
