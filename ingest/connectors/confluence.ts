/**
 * Confluence pages (REST API v2 with plain fetch-style calls: confluence.js speaks v1 only) of
 * the chosen `spaces` (else every space the credentials see), a page's storage-format body as
 * HTML, its version number its change signal; with `include_attachments`, the pages'
 * attachments as documents of their own. Reached through the Atlassian gateway by `cloud_id`, or
 * at `base_url`; basic auth (username + API token), an OAuth access token, or a connection.
 * Every request passes the private-address guard (base_url is the user's).
 */
import type { StagedFile } from '../../objects/object-store.js';
import { withoutCredentials } from '../../outbound/messages.js';
import { open, readBody, WebError } from '../../outbound/web-client.js';
import type { ConnectionTokens, Connector, ConnectorContext, ItemRef, SourceItem, Validation } from './connector.js';
import { mediaTypeOf } from './media-types.js';
import { stageBytes, stageStream } from './staging.js';

interface ConfluenceConfig {
  cloud_id?: string;
  base_url?: string;
  auth_mode: 'basic' | 'oauth' | 'connection';
  username?: string;
  api_token?: string;
  connection_id?: string;
  oauth_credentials?: { access_token?: string };
  spaces: string[];
  include_attachments: boolean;
}

interface Page<T> {
  results: T[];
  _links?: { next?: string; base?: string };
}

interface SpaceJson {
  id: string;
  key: string;
  name: string;
}

interface PageJson {
  id: string;
  title: string;
  version?: { number?: number };
  body?: { storage?: { value?: string } };
  _links?: { webui?: string };
}

interface AttachmentJson {
  id: string;
  title: string;
  mediaType?: string;
  fileSize?: number;
  version?: { number?: number };
  downloadLink?: string;
  _links?: { download?: string; webui?: string };
}

const MB = 1024 * 1024;

export class ConfluenceConnector implements Connector {
  readonly type = 'confluence' as const;
  readonly retainsOriginals = false;

  constructor(
    private readonly stagingDir: string,
    private readonly apiUrl: string,
    private readonly allowPrivateNetwork: boolean,
    private readonly tokens: ConnectionTokens,
  ) {}

  async *list(ctx: ConnectorContext): AsyncIterable<SourceItem> {
    const c = ctx.config as unknown as ConfluenceConfig;
    const auth = await this.auth(ctx, true);
    for (const space of await this.spaces(c, auth, ctx.signal)) {
      for await (const { page, site } of this.paged<PageJson>(c, auth, `/wiki/api/v2/spaces/${space.id}/pages?limit=100`, ctx.signal)) {
        yield { id: `page:${page.id}`, name: page.title, path: `${space.key}/${page.title}`, url: webUrl(site, page._links?.webui), contentType: 'text/html', size: null, version: String(page.version?.number ?? '') || null };
        if (!c.include_attachments) continue;
        for await (const { page: a } of this.paged<AttachmentJson>(c, auth, `/wiki/api/v2/pages/${page.id}/attachments?limit=100`, ctx.signal)) {
          const link = a.downloadLink ?? a._links?.download;
          if (!link) continue;
          yield {
            id: `attachment:${a.id}:${link}`,
            name: a.title,
            path: `${space.key}/${page.title}/${a.title}`,
            url: webUrl(site, a._links?.webui ?? link),
            contentType: a.mediaType ?? mediaTypeOf(a.title),
            size: a.fileSize ?? null,
            version: String(a.version?.number ?? '') || null,
          };
        }
      }
    }
  }

  async fetch(ctx: ConnectorContext, item: ItemRef): Promise<StagedFile> {
    const c = ctx.config as unknown as ConfluenceConfig;
    const auth = await this.auth(ctx);
    const id = item.item?.id ?? item.file_path;
    const [kind, pageOrAttachment, ...link] = id.split(':');
    if (kind === 'page') {
      const page = (await this.json(c, auth, `/wiki/api/v2/pages/${pageOrAttachment}?body-format=storage`, ctx.signal)) as PageJson;
      const html = `<html><head><title>${escape(page.title)}</title></head><body><main><h1>${escape(page.title)}</h1>${page.body?.storage?.value ?? ''}</main></body></html>`;
      return stageBytes(Buffer.from(html), this.stagingDir);
    }
    const { res } = await open('GET', `${this.base(c)}/wiki${link.join(':')}`, { headers: auth, signal: ctx.signal, allowPrivate: this.allowPrivateNetwork });
    if (res.statusCode !== 200) {
      res.resume();
      throw new WebError(`Confluence answered ${res.statusCode} for attachment ${pageOrAttachment}`, res.statusCode ?? null);
    }
    return stageStream(res, this.stagingDir, this.maxBytes(), ctx.signal);
  }

  async validate(ctx: ConnectorContext): Promise<Validation> {
    const c = ctx.config as unknown as ConfluenceConfig;
    const auth = await this.auth(ctx);
    const spaces = await this.spaces(c, auth, ctx.signal);
    const warnings: string[] = [];
    const found = new Set(spaces.map((s) => s.key));
    for (const key of c.spaces) if (!found.has(key)) warnings.push(`the credentials see no space ${key}`);
    if (spaces.length === 0) warnings.push('the credentials see no space');
    const samples: Validation['samples'] = [];
    for (const space of spaces) {
      for await (const { page, site } of this.paged<PageJson>(c, auth, `/wiki/api/v2/spaces/${space.id}/pages?limit=5`, ctx.signal)) {
        samples.push({ title: `${space.key}: ${page.title}`, url: webUrl(site, page._links?.webui) });
        if (samples.length >= 5) return { samples, warnings };
      }
    }
    return { samples, warnings };
  }

  maxBytes(): number {
    return 100 * MB;
  }

  private async spaces(c: ConfluenceConfig, auth: Record<string, string>, signal: AbortSignal): Promise<SpaceJson[]> {
    const query = c.spaces.length ? `?keys=${c.spaces.map(encodeURIComponent).join(',')}&limit=100` : '?limit=100';
    const out: SpaceJson[] = [];
    for await (const { page } of this.paged<SpaceJson>(c, auth, `/wiki/api/v2/spaces${query}`, signal)) out.push(page);
    return out;
  }

  /** Every result of a v2 list, following `_links.next` (the cursor) to the end. */
  private async *paged<T>(c: ConfluenceConfig, auth: Record<string, string>, first: string, signal: AbortSignal): AsyncIterable<{ page: T; site: string | null }> {
    let next: string | undefined = first;
    while (next) {
      const body = (await this.json(c, auth, next, signal)) as Page<T>;
      const site = body._links?.base ?? null;
      for (const r of body.results ?? []) yield { page: r, site };
      next = body._links?.next;
    }
  }

  private async json(c: ConfluenceConfig, auth: Record<string, string>, path: string, signal: AbortSignal): Promise<unknown> {
    const { res } = await open('GET', `${this.base(c)}${path}`, { headers: { ...auth, accept: 'application/json' }, signal, allowPrivate: this.allowPrivateNetwork });
    const status = res.statusCode ?? 0;
    const text = (await readBody(res, 50 * MB)).toString('utf8');
    if (status === 401) throw new WebError('Confluence refused the credentials (401): check the username and API token, or the token', status);
    if (status === 403) throw new WebError(`the credentials may not read ${path.split('?')[0]} (403)`, status);
    if (status !== 200) throw new WebError(`Confluence answered ${status} for ${path.split('?')[0]}: ${withoutCredentials(text, auth.authorization).slice(0, 200)}`, status);
    return JSON.parse(text);
  }

  private base(c: ConfluenceConfig): string {
    return c.base_url ? c.base_url.replace(/\/+$/, '').replace(/\/wiki$/, '') : `${this.apiUrl}/ex/confluence/${encodeURIComponent(c.cloud_id!)}`;
  }

  /** Request headers of the source's credentials; a connection's token is refreshed when a run starts (`fresh`). */
  private async auth(ctx: ConnectorContext, fresh = false): Promise<Record<string, string>> {
    const c = ctx.config as unknown as ConfluenceConfig;
    if (c.auth_mode === 'basic') {
      if (!c.username || !c.api_token) throw new Error('auth_mode basic needs username and api_token');
      return { authorization: `Basic ${Buffer.from(`${c.username}:${c.api_token}`).toString('base64')}` };
    }
    if (c.auth_mode === 'oauth') {
      if (!c.oauth_credentials?.access_token) throw new Error('auth_mode oauth needs oauth_credentials.access_token');
      return { authorization: `Bearer ${c.oauth_credentials.access_token}` };
    }
    if (!c.connection_id) throw new Error('auth_mode connection needs connection_id');
    return { authorization: `Bearer ${await this.tokens.accessToken(ctx.orgId, c.connection_id, ctx.signal, fresh)}` };
  }
}

function webUrl(site: string | null, path: string | undefined): string | null {
  if (!path) return null;
  return site ? `${site.replace(/\/+$/, '')}${path}` : path;
}

function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
