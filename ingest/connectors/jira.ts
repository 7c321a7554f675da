/**
 * Jira Cloud issues (jira.js, the REST API v3 through api.atlassian.com/ex/jira/{cloud_id}): the
 * issues `jql` selects (else those of `project_keys`), one document each with its fields, its
 * description and, with `include_comments`, its comments (Atlassian Document Format turned to
 * text). An issue's `updated` is its version. The token is the source's `access_token` or its
 * connection's (refreshed before each run).
 */
import { Version3Client } from 'jira.js';
import type { StagedFile } from '../../objects/object-store.js';
import { adfToText } from './adf.js';
import type { ConnectionTokens, Connector, ConnectorContext, ItemRef, SourceItem, Validation } from './connector.js';
import { retrying, statusOf, type HttpFailure } from './retry.js';
import { stageBytes } from './staging.js';

interface JiraConfig {
  cloud_id: string;
  access_token?: string;
  connection_id?: string;
  project_keys?: string[];
  jql?: string;
  include_comments: boolean;
}

const LIST_FIELDS = ['summary', 'updated', 'project'];
const ISSUE_FIELDS = ['summary', 'description', 'status', 'issuetype', 'priority', 'assignee', 'reporter', 'created', 'updated', 'labels', 'project'];

export class JiraConnector implements Connector {
  readonly type = 'jira' as const;
  readonly retainsOriginals = false;

  constructor(
    private readonly stagingDir: string,
    private readonly apiUrl: string,
    private readonly tokens: ConnectionTokens,
  ) {}

  async *list(ctx: ConnectorContext): AsyncIterable<SourceItem> {
    const c = ctx.config as unknown as JiraConfig;
    const token = await this.token(ctx, true);
    const client = this.client(c, token);
    const site = await this.siteUrl(c, token);
    let nextPageToken: string | undefined;
    do {
      const page = await this.call(() => client.issueSearch.searchForIssuesUsingJqlEnhancedSearch({ jql: jqlOf(c), fields: LIST_FIELDS, maxResults: 100, nextPageToken }), 'searching issues', ctx.signal);
      for (const issue of page.issues ?? []) {
        const f = issue.fields as { summary?: string; updated?: string; project?: { key?: string } };
        yield {
          id: String(issue.id),
          name: `${issue.key} ${f.summary ?? ''}`.trim(),
          path: `${f.project?.key ?? issue.key!.split('-')[0]}/${issue.key}`,
          url: site ? `${site}/browse/${issue.key}` : null,
          contentType: 'text/markdown',
          size: null,
          version: f.updated ?? null,
        };
      }
      nextPageToken = page.nextPageToken ?? undefined;
    } while (nextPageToken);
  }

  async fetch(ctx: ConnectorContext, item: ItemRef): Promise<StagedFile> {
    const c = ctx.config as unknown as JiraConfig;
    const client = this.client(c, await this.token(ctx));
    const id = item.item?.id ?? item.file_path;
    const issue = await this.call(() => client.issues.getIssue({ issueIdOrKey: id, fields: ISSUE_FIELDS }), `reading issue ${id}`, ctx.signal);
    const f = issue.fields as unknown as Record<string, any>;
    const who = (u: any) => u?.displayName ?? 'nobody';
    const lines = [
      `# ${issue.key}: ${f.summary ?? ''}`,
      '',
      [`Type: ${f.issuetype?.name ?? '?'}`, `Status: ${f.status?.name ?? '?'}`, f.priority ? `Priority: ${f.priority.name}` : null, `Assignee: ${who(f.assignee)}`, `Reporter: ${who(f.reporter)}`, `Created: ${f.created}`, `Updated: ${f.updated}`, f.labels?.length ? `Labels: ${f.labels.join(', ')}` : null].filter(Boolean).join(' · '),
      '',
      adfToText(f.description),
    ];
    if (c.include_comments) {
      const comments: string[] = [];
      for (let startAt = 0; ; ) {
        const page = await this.call(() => client.issueComments.getComments({ issueIdOrKey: id, startAt, maxResults: 100 }), `reading the comments of ${issue.key}`, ctx.signal);
        for (const x of page.comments ?? []) comments.push(`**${who(x.author)}** (${x.created}): ${adfToText(x.body)}`);
        startAt += page.comments?.length ?? 0;
        if (!page.comments?.length || startAt >= (page.total ?? 0)) break;
      }
      if (comments.length) lines.push('', '## Comments', '', ...comments);
    }
    return stageBytes(Buffer.from(lines.join('\n')), this.stagingDir);
  }

  async validate(ctx: ConnectorContext): Promise<Validation> {
    const c = ctx.config as unknown as JiraConfig;
    const token = await this.token(ctx);
    const site = await this.siteUrl(c, token);
    const page = await this.call(() => this.client(c, token).issueSearch.searchForIssuesUsingJqlEnhancedSearch({ jql: jqlOf(c), fields: LIST_FIELDS, maxResults: 5 }), 'searching issues', ctx.signal);
    const issues = page.issues ?? [];
    const warnings = issues.length === 0 ? [`the JQL matches no issue: ${jqlOf(c)}`] : [];
    return { samples: issues.map((i) => ({ title: `${i.key} ${(i.fields as { summary?: string }).summary ?? ''}`.trim(), url: site ? `${site}/browse/${i.key}` : null })), warnings };
  }

  maxBytes(): number {
    return 50 * 1024 * 1024;
  }

  /** The source's token; a connection's is refreshed when a run starts (`fresh`). */
  private token(ctx: ConnectorContext, fresh = false): Promise<string> {
    const c = ctx.config as unknown as JiraConfig;
    if (c.access_token) return Promise.resolve(c.access_token);
    if (c.connection_id) return this.tokens.accessToken(ctx.orgId, c.connection_id, ctx.signal, fresh);
    throw new Error('a jira source needs access_token or connection_id');
  }

  private client(c: JiraConfig, accessToken: string): Version3Client {
    return new Version3Client({ host: `${this.apiUrl}/ex/jira/${encodeURIComponent(c.cloud_id)}`, authentication: { oauth2: { accessToken } } });
  }

  /** The site's address (for browse links), from the token's accessible resources. */
  private async siteUrl(c: JiraConfig, token: string): Promise<string | null> {
    const res = await fetch(`${this.apiUrl}/oauth/token/accessible-resources`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    if (res.status === 401) throw new Error('Atlassian refused the token (401): it is wrong or expired');
    if (!res.ok) return null;
    const sites = (await res.json()) as { id: string; url: string }[];
    const site = sites.find((s) => s.id === c.cloud_id);
    if (!site) throw new Error(`the token cannot reach the Jira site ${c.cloud_id} (it sees ${sites.map((s) => s.id).join(', ') || 'no site'})`);
    return site.url.replace(/\/+$/, '');
  }

  private async call<T>(fn: () => Promise<T>, what: string, signal: AbortSignal): Promise<T> {
    try {
      return await retrying(fn, signal);
    } catch (e) {
      throw new Error(describe(e, what));
    }
  }
}

function jqlOf(c: JiraConfig): string {
  if (c.jql && c.jql.trim() !== '') return c.jql;
  if (c.project_keys?.length) return `project in (${c.project_keys.map((k) => `"${k.replace(/"/g, '')}"`).join(', ')}) ORDER BY updated DESC`;
  return 'project is not EMPTY ORDER BY updated DESC';
}

/** A Jira failure in words: its status and Jira's own messages, never a stack. */
function describe(e: unknown, what: string): string {
  const status = statusOf(e);
  const data = ((e as HttpFailure)?.response?.data ?? {}) as { errorMessages?: string[]; message?: string };
  const said = data.errorMessages?.join('; ') || data.message || (e as Error)?.message || String(e);
  if (status === 401) return `Jira refused the token while ${what} (401): it is wrong or expired`;
  if (status === 403) return `the token may not read this while ${what} (403): ${said}`;
  return `Jira answered ${status ?? 'nothing'} while ${what}: ${said}`;
}
