/**
 * GitLab projects (gitbeaker, REST v4, gitlab.com or a self-managed `gitlab_url`): the projects
 * named and those of the groups named (subgroups included); files of the selected branches
 * (default, recently pushed, or named; minus excluded refs) by globs, a file's blob SHA its
 * version; merge requests with their discussions, and commits that no merge request brought, as
 * documents of their own. A personal or group access token (`auth_mode: token`) or a
 * connection's OAuth token. gitbeaker waits out 429s itself; other failures are put in words.
 */
import { Gitlab } from '@gitbeaker/rest';
import { FileError } from '../../errors/job-errors.js';
import type { StagedFile } from '../../objects/object-store.js';
import { checkLiteralHost } from '../../outbound/address-guard.js';
import type { ConnectionTokens, Connector, ConnectorContext, ItemRef, SourceItem, Validation } from './connector.js';
import { codeMediaType, DAY_MS, UNREADABLE_FILE } from './code-files.js';
import { globMatcher } from './globs.js';
import { stageBytes } from './staging.js';

interface GitLabConfig {
  groups: string[];
  projects: string[];
  auth_mode: 'oauth' | 'token';
  gitlab_url: string;
  connection_id?: string;
  access_token?: string;
  ref_mode: 'default' | 'active' | 'explicit';
  refs: string[];
  excluded_refs: string[];
  active_branch_days: number;
  include_merge_requests: boolean;
  include_review_threads: boolean;
  include_direct_commits: boolean;
  include_globs: string[];
  exclude_globs: string[];
  max_file_size_bytes: number;
}

interface Project {
  id: number;
  path_with_namespace: string;
  default_branch: string | null;
  web_url: string;
}

type Api = InstanceType<typeof Gitlab>;


export class GitLabConnector implements Connector {
  readonly type = 'gitlab' as const;
  readonly retainsOriginals = false;

  constructor(
    private readonly stagingDir: string,
    private readonly allowPrivateNetwork: boolean,
    private readonly tokens: ConnectionTokens,
  ) {}

  async *list(ctx: ConnectorContext): AsyncIterable<SourceItem> {
    const c = ctx.config as unknown as GitLabConfig;
    const api = await this.api(ctx, true);
    const include = globMatcher(c.include_globs);
    const exclude = c.exclude_globs.length ? globMatcher(c.exclude_globs) : () => false;
    for (const p of await this.projects(api, c)) {
      if (!p.default_branch) continue;
      for (const branch of await this.branches(api, p, c)) {
        const tree = (await call(() => api.Repositories.allRepositoryTrees(p.id, { ref: branch, recursive: true }), `the tree of ${p.path_with_namespace}@${branch}`)) as unknown as { id: string; path: string; type: string; name: string }[];
        for (const e of tree) {
          if (e.type !== 'blob' || UNREADABLE_FILE.test(e.path) || !include(e.path) || exclude(e.path)) continue;
          yield {
            id: `${p.id}|file|${branch}:${e.path}`,
            name: e.name,
            path: `${p.path_with_namespace}/${branch}/${e.path}`,
            url: `${p.web_url}/-/blob/${encodeURIComponent(branch)}/${e.path}`,
            contentType: codeMediaType(e.name),
            size: null,
            version: e.id,
          };
        }
        if (c.include_direct_commits) yield* this.directCommits(api, p, branch, c);
      }
      if (c.include_merge_requests) {
        const mrs = (await call(() => api.MergeRequests.all({ projectId: p.id, state: 'all' } as never), `the merge requests of ${p.path_with_namespace}`)) as unknown as { iid: number; title: string; web_url: string; updated_at: string }[];
        for (const mr of mrs) yield { id: `${p.id}|mr|${mr.iid}`, name: `!${mr.iid} ${mr.title}`, path: `${p.path_with_namespace}/merge_requests/${mr.iid}`, url: mr.web_url, contentType: 'text/markdown', size: null, version: mr.updated_at };
      }
    }
  }

  async fetch(ctx: ConnectorContext, item: ItemRef): Promise<StagedFile> {
    const c = ctx.config as unknown as GitLabConfig;
    const api = await this.api(ctx);
    const [project, kind, ...rest] = (item.item?.id ?? item.file_path).split('|');
    const id = Number(project);
    if (kind === 'file') {
      const blob = (await call(() => api.Repositories.showBlob(id, item.item!.version!), `blob ${item.item!.version}`)) as unknown as { size: number; content: string };
      if (blob.size > c.max_file_size_bytes) throw new FileError('file_too_large', `${blob.size} bytes; max_file_size_bytes is ${c.max_file_size_bytes}`);
      return stageBytes(Buffer.from(blob.content, 'base64'), this.stagingDir);
    }
    if (kind === 'mr') {
      const iid = Number(rest[0]);
      const mr = (await call(() => api.MergeRequests.show(id, iid), `merge request !${iid}`)) as unknown as { iid: number; title: string; description: string | null; state: string; author?: { username?: string }; created_at: string };
      const lines = [`# !${mr.iid} ${mr.title}`, '', `${mr.state}; opened by ${mr.author?.username ?? 'unknown'} on ${mr.created_at}`, '', mr.description ?? ''];
      if (c.include_review_threads) {
        const discussions = (await call(() => api.MergeRequestDiscussions.all(id, iid), `the discussions of !${iid}`)) as unknown as { notes?: { author?: { username?: string }; body: string; system?: boolean; position?: { new_path?: string } }[] }[];
        const notes = discussions.flatMap((d) => (d.notes ?? []).filter((n) => !n.system));
        if (notes.length) lines.push('', '## Discussions', '', ...notes.map((n) => `**${n.author?.username ?? 'unknown'}**${n.position?.new_path ? ` on \`${n.position.new_path}\`` : ''}: ${n.body}`));
      }
      return stageBytes(Buffer.from(lines.join('\n')), this.stagingDir);
    }
    const sha = rest[0];
    const commit = (await call(() => api.Commits.show(id, sha), `commit ${sha}`)) as unknown as { id: string; message: string; author_name: string; committed_date: string };
    const diff = (await call(() => api.Commits.showDiff(id, sha), `the diff of ${sha}`)) as unknown as { new_path: string; diff: string }[];
    const lines = [`# Commit ${commit.id.slice(0, 12)}`, '', `by ${commit.author_name} on ${commit.committed_date}`, '', commit.message, ''];
    for (const d of diff) lines.push(`## ${d.new_path}`, '', '```diff', d.diff.slice(0, 20_000), '```', '');
    return stageBytes(Buffer.from(lines.join('\n')), this.stagingDir);
  }

  async validate(ctx: ConnectorContext): Promise<Validation> {
    const c = ctx.config as unknown as GitLabConfig;
    const api = await this.api(ctx);
    const warnings: string[] = [];
    const projects: Project[] = [];
    for (const path of c.projects) {
      try {
        projects.push((await call(() => api.Projects.show(path), `project ${path}`)) as unknown as Project);
      } catch (e) {
        if (/401/.test((e as Error).message)) throw e;
        warnings.push(`the token cannot see project ${path}`);
      }
    }
    for (const g of c.groups) {
      try {
        const inGroup = (await call(() => api.Groups.allProjects(g, { includeSubgroups: true } as never), `group ${g}`)) as unknown as Project[];
        if (inGroup.length === 0) warnings.push(`group ${g} has no project the token can see`);
        projects.push(...inGroup);
      } catch (e) {
        if (/401/.test((e as Error).message)) throw e;
        warnings.push(`the token cannot see group ${g}`);
      }
    }
    const samples: Validation['samples'] = projects.slice(0, 5).map((p) => ({ title: p.path_with_namespace, url: p.web_url }));
    return { samples, warnings };
  }

  maxBytes(config: Record<string, unknown>): number {
    return config.max_file_size_bytes as number;
  }

  private async projects(api: Api, c: GitLabConfig): Promise<Project[]> {
    const byId = new Map<number, Project>();
    for (const path of c.projects) {
      const p = (await call(() => api.Projects.show(path), `project ${path}`)) as unknown as Project;
      byId.set(p.id, p);
    }
    for (const g of c.groups) {
      for (const p of (await call(() => api.Groups.allProjects(g, { includeSubgroups: true } as never), `group ${g}`)) as unknown as Project[]) byId.set(p.id, p);
    }
    return [...byId.values()];
  }

  private async branches(api: Api, p: Project, c: GitLabConfig): Promise<string[]> {
    const excluded = new Set(c.excluded_refs);
    if (c.ref_mode === 'default') return [p.default_branch!];
    if (c.ref_mode === 'explicit') return c.refs.filter((r) => !excluded.has(r));
    const since = Date.now() - c.active_branch_days * DAY_MS;
    const all = (await call(() => api.Branches.all(p.id), `the branches of ${p.path_with_namespace}`)) as unknown as { name: string; commit?: { committed_date?: string } }[];
    const active = all.filter((b) => !excluded.has(b.name) && b.name !== p.default_branch && Date.parse(b.commit?.committed_date ?? '') >= since).map((b) => b.name);
    return excluded.has(p.default_branch!) ? active : [p.default_branch!, ...active];
  }

  private async *directCommits(api: Api, p: Project, branch: string, c: GitLabConfig): AsyncIterable<SourceItem> {
    const since = new Date(Date.now() - c.active_branch_days * DAY_MS).toISOString();
    const commits = (await call(() => api.Commits.all(p.id, { refName: branch, since }), `the commits of ${p.path_with_namespace}@${branch}`)) as unknown as { id: string; title: string; web_url: string }[];
    for (const commit of commits) {
      const mrs = (await call(() => api.Commits.allMergeRequests(p.id, commit.id), `the merge requests of ${commit.id}`)) as unknown as unknown[];
      if (mrs.length > 0) continue;
      yield { id: `${p.id}|commit|${commit.id}`, name: `${commit.id.slice(0, 7)} ${commit.title}`, path: `${p.path_with_namespace}/commits/${commit.id}`, url: commit.web_url, contentType: 'text/markdown', size: null, version: commit.id };
    }
  }

  private async api(ctx: ConnectorContext, fresh = false): Promise<Api> {
    const c = ctx.config as unknown as GitLabConfig;
    const host = c.gitlab_url.replace(/\/+$/, '');
    checkLiteralHost(new URL(host), this.allowPrivateNetwork);
    if (c.auth_mode === 'token') {
      if (!c.access_token) throw new Error('auth_mode token needs access_token');
      return new Gitlab({ host, token: c.access_token });
    }
    if (!c.connection_id) throw new Error('auth_mode oauth needs connection_id');
    return new Gitlab({ host, oauthToken: await this.tokens.accessToken(ctx.orgId, c.connection_id, ctx.signal, fresh) });
  }
}

/** A GitLab call whose failure reads as a sentence (status and GitLab's message, never a stack). */
async function call<T>(fn: () => Promise<T>, what: string): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const res = (e as { cause?: { response?: Response; description?: string } }).cause;
    const status = res?.response?.status;
    if (status === 401) throw new Error(`GitLab refused the token while reading ${what} (401): it is wrong, expired or lacks read_api`);
    if (status === 404) throw new Error(`GitLab found no ${what} (404), or the token may not see it`);
    throw new Error(`GitLab answered ${status ?? 'nothing'} for ${what}: ${res?.description ?? (e as Error).message}`);
  }
}
