// A local server that speaks the GitLab REST API v4 as gitbeaker calls it: projects by id or
// URL-encoded path, a group's projects, branches with their last commit date, recursive trees,
// blobs (git's blob SHA, base64), merge requests with discussions, commits with the merge
// requests that brought them and their diffs. Lists page by `page` / `per_page` with `Link`
// and `x-next-page` headers that keep every query parameter. PRIVATE-TOKEN or Bearer tokens.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { blobSha } from './github.js';

export interface LabProject {
  id: number;
  path: string;
  group: string;
  defaultBranch: string;
  branches: Map<string, { date: string; files: Map<string, string> }>;
  mergeRequests: { iid: number; title: string; description: string; state: string; updated_at: string; notes: { author: string; body: string; path?: string }[] }[];
  commits: { sha: string; branch: string; title: string; message: string; date: string; mr: number | null; diff: { new_path: string; diff: string }[] }[];
}

export async function startGitLab(opts: { tokens: Set<string>; pageSize?: number; latencyMs?: number }) {
  const projects: LabProject[] = [];
  const requests: { method: string; path: string }[] = [];
  const pageSize = opts.pageSize ?? 2;
  const server = createServer((req, res) => void delay(opts.latencyMs).then(() => {
    const url = new URL(req.url!, 'http://peer');
    requests.push({ method: req.method!, path: url.pathname + url.search });
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    const token = (req.headers['private-token'] as string | undefined) ?? (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!opts.tokens.has(token)) return send(401, { message: '401 Unauthorized' });
    const list = <T>(items: T[]) => {
      const per = Math.min(Number(url.searchParams.get('per_page') ?? 20), pageSize);
      const page = Number(url.searchParams.get('page') ?? 1);
      const headers: Record<string, string> = { 'x-total': String(items.length), 'x-per-page': String(per), 'x-page': String(page) };
      if (page * per < items.length) {
        const next = new URL(url.href);
        next.searchParams.set('page', String(page + 1));
        next.searchParams.set('per_page', String(per));
        headers.link = `<${base}${next.pathname}${next.search}>; rel="next"`;
        headers['x-next-page'] = String(page + 1);
      }
      return send(200, items.slice((page - 1) * per, page * per), headers);
    };
    const path = decodeURIComponent(url.pathname.replace(/^\/api\/v4/, ''));
    const projectJson = (p: LabProject) => ({ id: p.id, path_with_namespace: p.path, default_branch: p.defaultBranch, web_url: `${base}/${p.path}` });
    let r: RegExpExecArray | null;
    if ((r = /^\/groups\/(.+)\/projects$/.exec(path))) {
      const inGroup = projects.filter((p) => p.group === r![1] || p.group.startsWith(`${r![1]}/`));
      if (!projects.some((p) => p.group.startsWith(r![1]))) return send(404, { message: '404 Group Not Found' });
      return list(inGroup.map(projectJson));
    }
    const m = /^\/projects\/(.+?)(\/(repository|merge_requests)(\/.*)?)?$/.exec(path);
    const p = m ? projects.find((x) => String(x.id) === m[1] || x.path === m[1]) : undefined;
    if (!m || !p) return send(404, { message: '404 Project Not Found' });
    const rest = m[2] ?? '';
    if (rest === '') return send(200, projectJson(p));
    if (rest === '/repository/branches') return list([...p.branches.entries()].map(([name, b]) => ({ name, commit: { id: name, committed_date: b.date } })));
    if (rest === '/repository/tree') {
      const b = p.branches.get(url.searchParams.get('ref') ?? p.defaultBranch);
      if (!b) return send(404, { message: '404 Tree Not Found' });
      const entries = [...b.files.entries()].map(([file, content]) => ({ id: blobSha(content), name: file.split('/').pop(), type: 'blob', path: file, mode: '100644' }));
      return list(entries);
    }
    if ((r = /^\/repository\/blobs\/([0-9a-f]{40})$/.exec(rest))) {
      for (const b of p.branches.values()) for (const content of b.files.values()) if (blobSha(content) === r[1]) return send(200, { sha: r[1], size: Buffer.byteLength(content), encoding: 'base64', content: Buffer.from(content).toString('base64') });
      return send(404, { message: '404 Blob Not Found' });
    }
    const mrJson = (x: LabProject['mergeRequests'][number]) => ({ iid: x.iid, title: x.title, description: x.description, state: x.state, author: { username: 'ada' }, web_url: `${base}/${p.path}/-/merge_requests/${x.iid}`, updated_at: x.updated_at, created_at: x.updated_at });
    if (rest === '/merge_requests') return list(p.mergeRequests.map(mrJson));
    if ((r = /^\/merge_requests\/(\d+)$/.exec(rest))) {
      const x = p.mergeRequests.find((y) => y.iid === Number(r![1]));
      return x ? send(200, mrJson(x)) : send(404, { message: '404 Not found' });
    }
    if ((r = /^\/merge_requests\/(\d+)\/discussions$/.exec(rest))) {
      const x = p.mergeRequests.find((y) => y.iid === Number(r![1]));
      if (!x) return send(404, { message: '404 Not found' });
      return list(x.notes.map((n, i) => ({ id: String(i), notes: [{ author: { username: n.author }, body: n.body, system: false, ...(n.path ? { position: { new_path: n.path } } : {}) }] })));
    }
    const commitJson = (c: LabProject['commits'][number]) => ({ id: c.sha, short_id: c.sha.slice(0, 8), title: c.title, message: c.message, author_name: 'dev', committed_date: c.date, web_url: `${base}/${p.path}/-/commit/${c.sha}` });
    if (rest === '/repository/commits') {
      const since = url.searchParams.get('since');
      return list(p.commits.filter((c) => c.branch === (url.searchParams.get('ref_name') ?? p.defaultBranch) && (!since || c.date >= since)).map(commitJson));
    }
    if ((r = /^\/repository\/commits\/([0-9a-f]+)(\/(diff|merge_requests))?$/.exec(rest))) {
      const c = p.commits.find((x) => x.sha === r![1]);
      if (!c) return send(404, { message: '404 Commit Not Found' });
      if (r[3] === 'diff') return list(c.diff);
      if (r[3] === 'merge_requests') return send(200, c.mr ? [mrJson(p.mergeRequests.find((x) => x.iid === c.mr)!)] : []);
      return send(200, commitJson(c));
    }
    return send(404, { message: `404 no route ${rest} in this peer` });
  }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, projects, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The answer delay of a peer standing in for a distant service (benchmarks). */
function delay(ms: number | undefined): Promise<void> {
  return ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}
