/**
 * GitHub repositories through a read-only GitHub App installation (the App's id and key are the
 * deployment's; a source names its installation and repositories): files of the selected
 * branches (the default one, the recently pushed ones, or named ones; minus excluded refs),
 * filtered by globs and size, each file's blob SHA its version; pull requests with their
 * comments and review threads, and commits pushed without a pull request, as documents of their
 * own. The client is Octokit (`@octokit/rest` with `@octokit/auth-app`: a JWT, then an
 * installation token it caches); rate limits are waited out (Retry-After, x-ratelimit-reset).
 */
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import { FileError } from '../../errors/job-errors.js';
import type { StagedFile } from '../../objects/object-store.js';
import type { Connector, ConnectorContext, ItemRef, SourceItem, Validation } from './connector.js';
import { codeMediaType, DAY_MS, UNREADABLE_FILE } from './code-files.js';
import { globMatcher } from './globs.js';
import { retryWait, type HttpFailure } from './retry.js';
import { stageBytes } from './staging.js';

export interface GitHubAppSettings {
  apiUrl: string;
  appId: string;
  privateKey: string;
}

interface GitHubConfig {
  installation_id: number;
  repositories: string[];
  ref_mode: 'default' | 'active' | 'explicit';
  refs: string[];
  excluded_refs: string[];
  active_branch_days: number;
  include_pull_requests: boolean;
  include_review_threads: boolean;
  include_direct_commits: boolean;
  include_globs: string[];
  exclude_globs: string[];
  max_file_size_bytes: number;
}

/** Longest wait for a rate limit to reset before the call fails. */
const MAX_RATE_WAIT_MS = 60_000;

type Kind = 'file' | 'pull' | 'commit';

export class GitHubConnector implements Connector {
  readonly type = 'github' as const;
  readonly retainsOriginals = false;
  readonly oversize = 'skip' as const;
  private readonly clients = new Map<number, Octokit>();

  constructor(
    private readonly stagingDir: string,
    private readonly app: GitHubAppSettings | null,
  ) {}

  async *list(ctx: ConnectorContext): AsyncIterable<SourceItem> {
    const c = ctx.config as unknown as GitHubConfig;
    const gh = this.client(c);
    const include = globMatcher(c.include_globs);
    const exclude = c.exclude_globs.length ? globMatcher(c.exclude_globs) : () => false;
    for (const full of c.repositories) {
      const [owner, repo] = full.split('/');
      const { data: meta } = await gh.rest.repos.get({ owner, repo, request: { signal: ctx.signal } });
      for (const branch of await this.branches(gh, owner, repo, meta.default_branch, c, ctx.signal)) {
        const { data: tree } = await gh.rest.git.getTree({ owner, repo, tree_sha: branch.sha, recursive: 'true', request: { signal: ctx.signal } });
        for (const entry of tree.tree) {
          if (entry.type !== 'blob' || !entry.path || !entry.sha || UNREADABLE_FILE.test(entry.path)) continue;
          if (!include(entry.path) || exclude(entry.path)) continue;
          const name = entry.path.slice(entry.path.lastIndexOf('/') + 1);
          yield {
            id: itemId(full, 'file', `${branch.name}:${entry.path}`),
            name,
            path: `${full}/${branch.name}/${entry.path}`,
            url: `${meta.html_url}/blob/${encodeURIComponent(branch.name)}/${entry.path}`,
            contentType: codeMediaType(name),
            size: entry.size ?? null,
            version: entry.sha,
          };
        }
        if (c.include_direct_commits) yield* this.directCommits(gh, full, meta.html_url, branch.name, c, ctx.signal);
      }
      if (c.include_pull_requests) {
        for await (const page of gh.paginate.iterator(gh.rest.pulls.list, { owner, repo, state: 'all', per_page: 100, request: { signal: ctx.signal } })) {
          for (const pr of page.data) {
            yield { id: itemId(full, 'pull', String(pr.number)), name: `#${pr.number} ${pr.title}`, path: `${full}/pulls/${pr.number}`, url: pr.html_url, contentType: 'text/markdown', size: null, version: pr.updated_at };
          }
        }
      }
    }
  }

  async fetch(ctx: ConnectorContext, item: ItemRef): Promise<StagedFile> {
    const c = ctx.config as unknown as GitHubConfig;
    const gh = this.client(c);
    const { repo: full, kind, rest } = parseItemId(item.item?.id ?? item.file_path);
    const [owner, repo] = full.split('/');
    const request = { signal: ctx.signal };
    if (kind === 'file') {
      const { data } = await gh.rest.git.getBlob({ owner, repo, file_sha: item.item!.version!, request });
      return stageBytes(Buffer.from(data.content, 'base64'), this.stagingDir);
    }
    if (kind === 'pull') {
      const number = Number(rest);
      const { data: pr } = await gh.rest.pulls.get({ owner, repo, pull_number: number, request });
      const lines = [`# #${pr.number} ${pr.title}`, '', `${pr.state}${pr.merged_at ? ', merged' : ''}; opened by ${pr.user?.login ?? 'unknown'} on ${pr.created_at}`, '', pr.body ?? ''];
      const comments = await gh.paginate(gh.rest.issues.listComments, { owner, repo, issue_number: number, per_page: 100, request });
      if (comments.length) lines.push('', '## Comments', '', ...comments.map((x) => `**${x.user?.login ?? 'unknown'}** (${x.created_at}): ${x.body ?? ''}`));
      if (c.include_review_threads) {
        const reviews = await gh.paginate(gh.rest.pulls.listReviewComments, { owner, repo, pull_number: number, per_page: 100, request });
        if (reviews.length) lines.push('', '## Review threads', '', ...reviews.map((x) => `**${x.user?.login ?? 'unknown'}** on \`${x.path}\`: ${x.body}`));
      }
      return stageBytes(Buffer.from(lines.join('\n')), this.stagingDir);
    }
    const { data: commit } = await gh.rest.repos.getCommit({ owner, repo, ref: rest, request });
    const lines = [`# Commit ${commit.sha.slice(0, 12)}`, '', `by ${commit.commit.author?.name ?? 'unknown'} on ${commit.commit.author?.date ?? ''}`, '', commit.commit.message, ''];
    for (const f of commit.files ?? []) lines.push(`## ${f.filename} (${f.status})`, '', '```diff', (f.patch ?? '').slice(0, 20_000), '```', '');
    return stageBytes(Buffer.from(lines.join('\n')), this.stagingDir);
  }

  async validate(ctx: ConnectorContext): Promise<Validation> {
    const c = ctx.config as unknown as GitHubConfig;
    const gh = this.client(c);
    const visible = new Set<string>();
    try {
      for await (const page of gh.paginate.iterator(gh.rest.apps.listReposAccessibleToInstallation, { per_page: 100, request: { signal: ctx.signal } })) {
        for (const r of page.data as unknown as { full_name: string }[]) visible.add(r.full_name.toLowerCase());
      }
    } catch (e) {
      throw new Error(describe(e, `installation ${c.installation_id}`));
    }
    const warnings = c.repositories.filter((r) => !visible.has(r.toLowerCase())).map((r) => `the installation cannot see ${r} (install the App on it, or grant it the repository)`);
    const samples: Validation['samples'] = [];
    const first = c.repositories.find((r) => visible.has(r.toLowerCase()));
    if (first) {
      const [owner, repo] = first.split('/');
      const { data: meta } = await gh.rest.repos.get({ owner, repo });
      const { data: tree } = await gh.rest.git.getTree({ owner, repo, tree_sha: meta.default_branch, recursive: 'true' });
      for (const e of tree.tree.filter((x) => x.type === 'blob' && x.path && !UNREADABLE_FILE.test(x.path)).slice(0, 5)) {
        samples.push({ title: `${first}/${e.path}`, url: `${meta.html_url}/blob/${meta.default_branch}/${e.path}` });
      }
    }
    return { samples, warnings };
  }

  maxBytes(config: Record<string, unknown>): number {
    return config.max_file_size_bytes as number;
  }

  /** The branches a source reads: default, explicit, or pushed within active_branch_days (the default branch always). */
  private async branches(gh: Octokit, owner: string, repo: string, defaultBranch: string, c: GitHubConfig, signal: AbortSignal): Promise<{ name: string; sha: string }[]> {
    const excluded = new Set(c.excluded_refs);
    const shaOf = async (name: string) => (await gh.rest.repos.getBranch({ owner, repo, branch: name, request: { signal } })).data;
    if (c.ref_mode === 'default') return [{ name: defaultBranch, sha: (await shaOf(defaultBranch)).commit.sha }];
    if (c.ref_mode === 'explicit') {
      const out: { name: string; sha: string }[] = [];
      for (const name of c.refs.filter((r) => !excluded.has(r))) out.push({ name, sha: (await shaOf(name)).commit.sha });
      return out;
    }
    const since = Date.now() - c.active_branch_days * DAY_MS;
    const out: { name: string; sha: string }[] = [];
    for (const b of await gh.paginate(gh.rest.repos.listBranches, { owner, repo, per_page: 100, request: { signal } })) {
      if (excluded.has(b.name)) continue;
      if (b.name === defaultBranch) {
        out.unshift({ name: b.name, sha: b.commit.sha });
        continue;
      }
      const detail = await shaOf(b.name);
      const date = Date.parse(detail.commit.commit.committer?.date ?? detail.commit.commit.author?.date ?? '');
      if (Number.isFinite(date) && date >= since) out.push({ name: b.name, sha: b.commit.sha });
    }
    return out;
  }

  /** Commits of a branch within active_branch_days that no pull request brought. */
  private async *directCommits(gh: Octokit, full: string, htmlUrl: string, branch: string, c: GitHubConfig, signal: AbortSignal): AsyncIterable<SourceItem> {
    const [owner, repo] = full.split('/');
    const since = new Date(Date.now() - c.active_branch_days * DAY_MS).toISOString();
    const commits = await gh.paginate(gh.rest.repos.listCommits, { owner, repo, sha: branch, since, per_page: 100, request: { signal } });
    for (const commit of commits) {
      const pulls = await gh.rest.repos.listPullRequestsAssociatedWithCommit({ owner, repo, commit_sha: commit.sha, request: { signal } });
      if (pulls.data.length > 0) continue;
      const title = commit.commit.message.split('\n')[0].slice(0, 120);
      // The sha is the version: a commit never changes.
      yield { id: itemId(full, 'commit', commit.sha), name: `${commit.sha.slice(0, 7)} ${title}`, path: `${full}/commits/${commit.sha}`, url: `${htmlUrl}/commit/${commit.sha}`, contentType: 'text/markdown', size: null, version: commit.sha };
    }
  }

  private client(c: GitHubConfig): Octokit {
    // One client per installation: it keeps its installation token until it expires.
    let gh = this.clients.get(c.installation_id);
    if (!gh) this.clients.set(c.installation_id, (gh = this.newClient(c)));
    return gh;
  }

  private newClient(c: GitHubConfig): Octokit {
    if (!this.app) throw new FileError('source_unreachable', 'this service has no GitHub App: set SABLE_GITHUB_APP_ID and SABLE_GITHUB_APP_PRIVATE_KEY');
    const gh = new Octokit({
      baseUrl: this.app.apiUrl,
      authStrategy: createAppAuth,
      auth: { appId: this.app.appId, privateKey: this.app.privateKey, installationId: c.installation_id },
      userAgent: 'sable-retrieval',
      log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    gh.hook.wrap('request', async (request, options) => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await request(options);
        } catch (e) {
          const wait = retryWait(e, attempt);
          if (wait === null || attempt >= 3 || wait > MAX_RATE_WAIT_MS) throw new Error(describe(e, `${options.method} ${options.url}`));
          await new Promise((r) => setTimeout(r, wait));
        }
      }
    });
    return gh;
  }
}

function itemId(repo: string, kind: Kind, rest: string): string {
  return `${repo}|${kind}|${rest}`;
}

function parseItemId(id: string): { repo: string; kind: Kind; rest: string } {
  const [repo, kind, ...rest] = id.split('|');
  return { repo, kind: kind as Kind, rest: rest.join('|') };
}

/** A GitHub failure in words (its status and message), never a stack. */
function describe(e: unknown, what: string): string {
  const f = e as HttpFailure & { response?: { data?: { message?: string } } };
  if (f.status === 401) return `GitHub refused the App's credentials for ${what} (401): check SABLE_GITHUB_APP_ID and the private key`;
  if (f.status === 404) return `GitHub found no ${what} (404): is the installation id right, and the App installed?`;
  const message = (f.response?.data as { message?: string } | undefined)?.message ?? f.message ?? String(e);
  return `GitHub answered ${f.status ?? 'no status'} for ${what}: ${message}`;
}
