// A local server that speaks the GitHub REST API as Octokit calls it for a GitHub App: the App's
// JWT (RS256, checked against the App's public key) exchanged for an installation token; every
// other call needs that token. Repositories, branches with their last commit date, recursive
// trees, blobs (git's own blob SHA, base64 content), pull requests with comments and review
// comments, commits with the pull requests that brought them. Lists page with `per_page` (capped
// at `pageSize` to force paging) and `Link` headers that keep every query parameter. A scripted
// rate limit answers 403 with x-ratelimit-remaining 0 and x-ratelimit-reset. Requests are recorded.
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PeerPull {
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  user: string;
  updated_at: string;
  comments: { user: string; body: string }[];
  reviews: { user: string; body: string; path: string }[];
}

export interface PeerCommit {
  sha: string;
  branch: string;
  message: string;
  date: string;
  pull: number | null;
  files: { filename: string; status: string; patch: string }[];
}

export interface PeerRepo {
  full: string;
  defaultBranch: string;
  installed: boolean;
  branches: Map<string, { files: Map<string, string>; date: string }>;
  pulls: PeerPull[];
  commits: PeerCommit[];
}

export function blobSha(content: string): string {
  const bytes = Buffer.from(content);
  return createHash('sha1').update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes])).digest('hex');
}

function branchSha(name: string, files: Map<string, string>): string {
  const h = createHash('sha1').update(name);
  for (const [p, c] of [...files.entries()].sort()) h.update(`${p}\0${blobSha(c)}\0`);
  return h.digest('hex');
}

export async function startGitHub(opts: { appId: string; installationId: number; pageSize?: number; latencyMs?: number }) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const repos = new Map<string, PeerRepo>();
  const tokens = new Set<string>();
  const requests: { method: string; path: string }[] = [];
  let rateLimitNext = 0;
  const pageSize = opts.pageSize ?? 2;

  const server = createServer((req, res) => void delay(opts.latencyMs).then(() => {
    const url = new URL(req.url!, 'http://peer');
    requests.push({ method: req.method!, path: url.pathname + url.search });
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
    };
    const auth = req.headers.authorization ?? '';
    const tokenRoute = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(url.pathname);
    if (tokenRoute && req.method === 'POST') {
      const jwt = auth.replace(/^bearer /i, '');
      if (!validJwt(jwt, publicKey, opts.appId)) return send(401, { message: 'A JSON web token could not be decoded' });
      if (Number(tokenRoute[1]) !== opts.installationId) return send(404, { message: 'Not Found' });
      const token = `ghs_${createHash('sha1').update(String(Math.random())).digest('hex')}`;
      tokens.add(token);
      return send(201, { token, expires_at: new Date(Date.now() + 3600_000).toISOString(), permissions: { contents: 'read', pull_requests: 'read' }, repository_selection: 'selected' });
    }
    if (!tokens.has(auth.replace(/^(token|bearer) /i, ''))) return send(401, { message: 'Bad credentials' });
    if (rateLimitNext > 0) {
      rateLimitNext--;
      return send(403, { message: 'API rate limit exceeded for installation.' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 1) });
    }
    const page = <T>(items: T[]) => {
      const per = Math.min(Number(url.searchParams.get('per_page') ?? 30), pageSize);
      const n = Number(url.searchParams.get('page') ?? 1);
      const slice = items.slice((n - 1) * per, n * per);
      const headers: Record<string, string> = {};
      if (n * per < items.length) {
        const next = new URL(url.href);
        next.searchParams.set('page', String(n + 1));
        headers.link = `<${base}${next.pathname}${next.search}>; rel="next"`;
      }
      return { slice, headers };
    };
    if (url.pathname === '/installation/repositories') {
      const { slice, headers } = page([...repos.values()].filter((r) => r.installed).map((r) => ({ full_name: r.full, name: r.full.split('/')[1], private: true })));
      return send(200, { total_count: [...repos.values()].filter((r) => r.installed).length, repositories: slice }, headers);
    }
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(url.pathname);
    const repo = m ? repos.get(`${m[1]}/${m[2]}`) : undefined;
    if (!m || !repo || !repo.installed) return send(404, { message: 'Not Found' });
    const rest = decodeURIComponent(m[3] ?? '');
    const htmlUrl = `${base}/html/${repo.full}`;
    const branchOf = (name: string) => {
      const b = repo.branches.get(name);
      return b ? { name, commit: { sha: branchSha(name, b.files), commit: { committer: { date: b.date }, author: { date: b.date } } } } : undefined;
    };
    let r: RegExpExecArray | null;
    if (rest === '') return send(200, { full_name: repo.full, default_branch: repo.defaultBranch, html_url: htmlUrl, private: true });
    if (rest === '/branches') {
      const { slice, headers } = page([...repo.branches.keys()].map((name) => ({ name, commit: { sha: branchOf(name)!.commit.sha } })));
      return send(200, slice, headers);
    }
    if ((r = /^\/branches\/(.+)$/.exec(rest))) {
      const b = branchOf(r[1]);
      return b ? send(200, b) : send(404, { message: 'Branch not found' });
    }
    if ((r = /^\/git\/trees\/(.+)$/.exec(rest))) {
      const name = [...repo.branches.keys()].find((n) => n === r![1] || branchOf(n)!.commit.sha === r![1]);
      if (!name) return send(404, { message: 'Not Found' });
      const files = repo.branches.get(name)!.files;
      const tree = [...files.entries()].map(([path, content]) => ({ path, mode: '100644', type: 'blob', sha: blobSha(content), size: Buffer.byteLength(content) }));
      return send(200, { sha: branchOf(name)!.commit.sha, tree, truncated: false });
    }
    if ((r = /^\/git\/blobs\/([0-9a-f]{40})$/.exec(rest))) {
      for (const b of repo.branches.values()) {
        for (const content of b.files.values()) {
          if (blobSha(content) === r[1]) return send(200, { sha: r[1], size: Buffer.byteLength(content), encoding: 'base64', content: Buffer.from(content).toString('base64') });
        }
      }
      return send(404, { message: 'Not Found' });
    }
    const pullJson = (p: PeerPull) => ({ number: p.number, title: p.title, body: p.body, state: p.state, merged_at: null, user: { login: p.user }, html_url: `${htmlUrl}/pull/${p.number}`, updated_at: p.updated_at, created_at: p.updated_at });
    if (rest === '/pulls') {
      const { slice, headers } = page(repo.pulls.map(pullJson));
      return send(200, slice, headers);
    }
    if ((r = /^\/pulls\/(\d+)$/.exec(rest))) {
      const p = repo.pulls.find((x) => x.number === Number(r![1]));
      return p ? send(200, pullJson(p)) : send(404, { message: 'Not Found' });
    }
    if ((r = /^\/(issues|pulls)\/(\d+)\/comments$/.exec(rest))) {
      const p = repo.pulls.find((x) => x.number === Number(r![2]));
      if (!p) return send(404, { message: 'Not Found' });
      const items = r[1] === 'issues' ? p.comments.map((c) => ({ user: { login: c.user }, body: c.body, created_at: p.updated_at })) : p.reviews.map((c) => ({ user: { login: c.user }, body: c.body, path: c.path, diff_hunk: '@@', created_at: p.updated_at }));
      const { slice, headers } = page(items);
      return send(200, slice, headers);
    }
    const commitJson = (c: PeerCommit) => ({ sha: c.sha, html_url: `${htmlUrl}/commit/${c.sha}`, commit: { message: c.message, author: { name: 'dev', date: c.date }, committer: { name: 'dev', date: c.date } } });
    if (rest === '/commits') {
      const since = url.searchParams.get('since');
      const list = repo.commits.filter((c) => c.branch === (url.searchParams.get('sha') ?? repo.defaultBranch) && (!since || c.date >= since));
      const { slice, headers } = page(list.map(commitJson));
      return send(200, slice, headers);
    }
    if ((r = /^\/commits\/([0-9a-f]+)\/pulls$/.exec(rest))) {
      const c = repo.commits.find((x) => x.sha === r![1]);
      const p = c?.pull ? repo.pulls.find((x) => x.number === c.pull) : undefined;
      return send(200, p ? [pullJson(p)] : []);
    }
    if ((r = /^\/commits\/([0-9a-f]+)$/.exec(rest))) {
      const c = repo.commits.find((x) => x.sha === r![1]);
      return c ? send(200, { ...commitJson(c), files: c.files }) : send(404, { message: 'No commit found' });
    }
    return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
  }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    privateKey,
    repos,
    requests,
    /** The next `n` authenticated calls answer 403 rate limited (reset in a second). */
    rateLimit(n: number) {
      rateLimitNext = n;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function validJwt(jwt: string, publicKey: string, appId: string): boolean {
  const [h, p, s] = jwt.split('.');
  if (!h || !p || !s) return false;
  try {
    if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), createPublicKey(publicKey), Buffer.from(s, 'base64url'))) return false;
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    const now = Math.floor(Date.now() / 1000);
    return String(claims.iss) === appId && claims.exp > now && claims.iat <= now + 60;
  } catch {
    return false;
  }
}

/** The answer delay of a peer standing in for a distant service (benchmarks). */
function delay(ms: number | undefined): Promise<void> {
  return ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}
