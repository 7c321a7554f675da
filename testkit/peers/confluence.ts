// A local server that speaks the Confluence Cloud REST API v2 at a site (/wiki/api/v2/...) and
// through the Atlassian gateway (/ex/confluence/{cloudId}/wiki/api/v2/...): spaces by keys,
// pages of a space (cursor pages through `_links.next`), a page with its storage-format body,
// its attachments and their downloads. Basic auth (email + API token) or Bearer tokens are
// checked. Requests are recorded.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PeerPage {
  id: string;
  space: string;
  title: string;
  html: string;
  version: number;
  attachments: { id: string; title: string; mediaType: string; bytes: Uint8Array; version: number }[];
}

export async function startConfluence(opts: { cloudId: string; basic: { user: string; token: string }; tokens: Set<string>; pageSize?: number; latencyMs?: number }) {
  const spaces = [
    { id: '100', key: 'ENG', name: 'Engineering' },
    { id: '200', key: 'HR', name: 'People' },
  ];
  const pages: PeerPage[] = [];
  const requests: { method: string; path: string }[] = [];
  const pageSize = opts.pageSize ?? 2;
  const server = createServer((req, res) => void delay(opts.latencyMs).then(() => {
    const url = new URL(req.url!, 'http://peer');
    requests.push({ method: req.method!, path: url.pathname + url.search });
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const auth = req.headers.authorization ?? '';
    const basicOk = auth === `Basic ${Buffer.from(`${opts.basic.user}:${opts.basic.token}`).toString('base64')}`;
    const bearerOk = auth.startsWith('Bearer ') && opts.tokens.has(auth.slice(7));
    if (!basicOk && !bearerOk) return send(401, { code: 401, message: 'Unauthorized; scope does not match' });
    let path = url.pathname;
    const gateway = `/ex/confluence/${opts.cloudId}`;
    if (path.startsWith('/ex/confluence/')) {
      if (!path.startsWith(gateway + '/')) return send(404, { message: 'site not found' });
      path = path.slice(gateway.length);
    }
    const site = `${base}/wiki`;
    const list = <T>(items: T[], self: string) => {
      const cursor = Number(url.searchParams.get('cursor') ?? 0);
      const per = Math.min(Number(url.searchParams.get('limit') ?? 25), pageSize);
      const next = new URLSearchParams(url.searchParams);
      next.set('cursor', String(cursor + per));
      const more = cursor + per < items.length;
      return { results: items.slice(cursor, cursor + per), _links: { base: site, ...(more ? { next: `${self}?${next}` } : {}) } };
    };
    let r: RegExpExecArray | null;
    if (path === '/wiki/api/v2/spaces') {
      const keys = url.searchParams.get('keys')?.split(',');
      return send(200, list(spaces.filter((s) => !keys || keys.includes(s.key)), path));
    }
    const pageJson = (p: PeerPage, body: boolean) => ({
      id: p.id,
      title: p.title,
      status: 'current',
      spaceId: spaces.find((s) => s.key === p.space)!.id,
      version: { number: p.version },
      ...(body ? { body: { storage: { representation: 'storage', value: p.html } } } : {}),
      _links: { webui: `/spaces/${p.space}/pages/${p.id}` },
    });
    if ((r = /^\/wiki\/api\/v2\/spaces\/(\d+)\/pages$/.exec(path))) {
      const key = spaces.find((s) => s.id === r![1])?.key;
      return send(200, list(pages.filter((p) => p.space === key).map((p) => pageJson(p, false)), path));
    }
    if ((r = /^\/wiki\/api\/v2\/pages\/(\d+)$/.exec(path))) {
      const p = pages.find((x) => x.id === r![1]);
      return p ? send(200, pageJson(p, url.searchParams.get('body-format') === 'storage')) : send(404, { message: 'Page not found' });
    }
    if ((r = /^\/wiki\/api\/v2\/pages\/(\d+)\/attachments$/.exec(path))) {
      const p = pages.find((x) => x.id === r![1]);
      if (!p) return send(404, { message: 'Page not found' });
      const items = p.attachments.map((a) => ({ id: a.id, title: a.title, mediaType: a.mediaType, fileSize: a.bytes.byteLength, version: { number: a.version }, downloadLink: `/download/attachments/${p.id}/${encodeURIComponent(a.title)}?version=${a.version}`, _links: { webui: `/pages/viewpageattachments.action?pageId=${p.id}` } }));
      return send(200, list(items, path));
    }
    if ((r = /^\/wiki\/download\/attachments\/(\d+)\/(.+)$/.exec(path))) {
      const a = pages.find((x) => x.id === r![1])?.attachments.find((x) => x.title === decodeURIComponent(r![2]));
      if (!a) return send(404, { message: 'Attachment not found' });
      return res.writeHead(200, { 'content-type': a.mediaType }).end(a.bytes);
    }
    return send(404, { message: `no route ${path} in this peer` });
  }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, pages, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The answer delay of a peer standing in for a distant service (benchmarks). */
function delay(ms: number | undefined): Promise<void> {
  return ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}
