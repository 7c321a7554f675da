// A local server that speaks Jira Cloud's REST API v3 as jira.js calls it through
// api.atlassian.com: /oauth/token/accessible-resources (the sites a token reaches),
// /ex/jira/{cloudId}/rest/api/3/search/jql (JQL over the issues, paged by nextPageToken),
// /issue/{id} and /issue/{id}/comment (paged by startAt). Descriptions and comments are
// Atlassian Document Format. Bearer tokens are checked; a scripted 429 carries Retry-After.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PeerIssue {
  id: string;
  key: string;
  summary: string;
  description: string;
  status: string;
  updated: string;
  comments: { author: string; body: string }[];
}

export const adf = (text: string) => ({ type: 'doc', version: 1, content: text.split('\n\n').map((p) => ({ type: 'paragraph', content: [{ type: 'text', text: p }] })) });

export async function startJira(opts: { cloudId: string; tokens: Set<string>; pageSize?: number; latencyMs?: number }) {
  const issues: PeerIssue[] = [];
  const requests: { method: string; path: string }[] = [];
  let limited = 0;
  const pageSize = opts.pageSize ?? 2;
  const server = createServer((req, res) => void delay(opts.latencyMs).then(() => {
    const url = new URL(req.url!, 'http://peer');
    requests.push({ method: req.method!, path: url.pathname + url.search });
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!opts.tokens.has(token)) return send(401, { code: 401, message: 'Unauthorized' });
    if (url.pathname === '/oauth/token/accessible-resources') return send(200, [{ id: opts.cloudId, url: `${base}/site`, name: 'acme', scopes: ['read:jira-work'] }]);
    const prefix = `/ex/jira/${opts.cloudId}/rest/api/3`;
    if (!url.pathname.startsWith(prefix)) return send(404, { errorMessages: ['site not found'] });
    if (limited > 0) {
      limited--;
      return send(429, { errorMessages: ['Rate limit exceeded.'] }, { 'retry-after': '1' });
    }
    const rest = url.pathname.slice(prefix.length);
    const project = (i: PeerIssue) => i.key.split('-')[0];
    const fieldsOf = (i: PeerIssue) => ({
      summary: i.summary,
      updated: i.updated,
      created: i.updated,
      project: { key: project(i) },
      status: { name: i.status },
      issuetype: { name: 'Task' },
      assignee: { displayName: 'Ada' },
      reporter: null,
      labels: [],
      description: adf(i.description),
    });
    if (rest === '/search/jql') {
      const jql = url.searchParams.get('jql') ?? '';
      const m = /^project in \(([^)]*)\)/i.exec(jql);
      let matched: PeerIssue[];
      if (m) {
        const keys = m[1].split(',').map((k) => k.trim().replace(/"/g, ''));
        matched = issues.filter((i) => keys.includes(project(i)));
      } else if (/^project is not EMPTY/i.test(jql)) matched = [...issues];
      else if (/^status = (\w+)/i.test(jql)) matched = issues.filter((i) => i.status.toLowerCase() === /^status = (\w+)/i.exec(jql)![1].toLowerCase());
      else return send(400, { errorMessages: [`Error in the JQL Query: '${jql}' is not understood by this peer.`] });
      const start = Number(url.searchParams.get('nextPageToken') ?? 0);
      const per = Math.min(Number(url.searchParams.get('maxResults') ?? 50), pageSize);
      const slice = matched.slice(start, start + per);
      const more = start + per < matched.length;
      return send(200, { issues: slice.map((i) => ({ id: i.id, key: i.key, fields: { summary: i.summary, updated: i.updated, project: { key: project(i) } } })), ...(more ? { nextPageToken: String(start + per) } : {}), isLast: !more });
    }
    let r: RegExpExecArray | null;
    if ((r = /^\/issue\/([^/]+)$/.exec(rest))) {
      const i = issues.find((x) => x.id === r![1] || x.key === r![1]);
      return i ? send(200, { id: i.id, key: i.key, fields: fieldsOf(i) }) : send(404, { errorMessages: ['Issue does not exist or you do not have permission to see it.'] });
    }
    if ((r = /^\/issue\/([^/]+)\/comment$/.exec(rest))) {
      const i = issues.find((x) => x.id === r![1] || x.key === r![1]);
      if (!i) return send(404, { errorMessages: ['Issue does not exist'] });
      const startAt = Number(url.searchParams.get('startAt') ?? 0);
      const per = Math.min(Number(url.searchParams.get('maxResults') ?? 50), pageSize);
      const comments = i.comments.slice(startAt, startAt + per).map((c, k) => ({ id: String(startAt + k), author: { displayName: c.author }, body: adf(c.body), created: i.updated }));
      return send(200, { startAt, maxResults: per, total: i.comments.length, comments });
    }
    return send(404, { errorMessages: ['no such route in this peer'] });
  }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    issues,
    requests,
    rateLimit(n: number) {
      limited = n;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The answer delay of a peer standing in for a distant service (benchmarks). */
function delay(ms: number | undefined): Promise<void> {
  return ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}
