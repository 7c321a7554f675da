/**
 * The nine source types and the schema of each one's `config` (the contract's "Source config by
 * type"): required fields, defaults, limits, and secret fields marked (`x-secret`, `writeOnly`).
 * One definition per type: it validates create and validate (ajv, defaults filled in), it is what
 * GET /ingestion/source-types/{type} answers, and it goes into /openapi.json.
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { StringEnum } from '../../contract/json-schema.js';

export const SOURCE_TYPES = ['web', 's3', 'gcs', 'gdrive', 'github', 'gitlab', 'jira', 'confluence', 'file_upload'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** A secret field: stored encrypted, shown as ******** in every answer. */
const Secret = (description: string) => Type.String({ minLength: 1, description, writeOnly: true, 'x-secret': true });
const SecretObject = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description, writeOnly: true, 'x-secret': true });

const SyncMode = (dflt: 'full' | 'incremental') =>
  StringEnum(['full', 'incremental'] as const, { default: dflt, description: 'incremental: unchanged documents are skipped, removed ones deleted' });
const FilePatterns = Type.Array(Type.String({ minLength: 1 }), { default: ['*.pdf', '*.docx', '*.txt', '*.csv'], description: 'glob patterns of the files to ingest' });
const RefFields = {
  ref_mode: StringEnum(['default', 'active', 'explicit'] as const, { default: 'active', description: 'default: the default branch; active: recently pushed branches; explicit: refs' }),
  refs: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'branch names, with ref_mode explicit' }),
  excluded_refs: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  active_branch_days: Type.Integer({ minimum: 1, maximum: 90, default: 7, description: 'with ref_mode active' }),
};
const CodeFilters = {
  include_globs: Type.Array(Type.String({ minLength: 1 }), { default: ['**/*'] }),
  exclude_globs: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  max_file_size_bytes: Type.Integer({ minimum: 1, maximum: 25_000_000, default: 1_000_000 }),
  sync_mode: SyncMode('incremental'),
};

/** `required` lists the fields a config must have; every other field is optional (with its default). */
function config(props: Record<string, TSchema>, required: string[], options: Record<string, unknown> = {}): TObject {
  const properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, required.includes(k) ? v : Type.Optional(v)]));
  return Type.Object(properties, { additionalProperties: false, ...options });
}

export const SOURCE_CONFIGS: Record<SourceType, TObject> = {
  web: config(
    {
      start_urls: Type.Array(Type.String({ format: 'uri', pattern: '^https?://' }), { minItems: 1, description: 'seed URLs' }),
      max_depth: Type.Integer({ minimum: 0, maximum: 20, default: 3 }),
      max_pages: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000 }),
      allowed_domains: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
      include_assets: Type.Boolean({ default: true, description: 'crawl linked documents (PDF, DOCX...)' }),
      max_assets_per_page: Type.Integer({ minimum: 0, maximum: 1000, default: 5 }),
      selectors: Type.Object({ content: Type.Optional(Type.String()), title: Type.Optional(Type.String()), exclude: Type.Optional(Type.String()) }, { additionalProperties: false }),
      headers: Type.Record(Type.String(), Type.String(), { default: {}, description: 'extra HTTP request headers' }),
      sync_mode: SyncMode('incremental'),
    },
    ['start_urls'],
  ),
  s3: config(
    {
      bucket: Type.String({ minLength: 1 }),
      access_key_id: Secret('access key id'),
      secret_access_key: Secret('secret access key'),
      prefix: Type.String({ description: 'key prefix' }),
      region: Type.String({ default: 'us-east-1' }),
      endpoint: Type.String({ pattern: '^https?://', description: 'an S3-compatible endpoint (default: AWS)' }),
      file_patterns: FilePatterns,
      max_file_size_mb: Type.Integer({ minimum: 1, maximum: 5000, default: 100, description: 'larger files are skipped' }),
      sync_mode: SyncMode('incremental'),
    },
    ['bucket', 'access_key_id', 'secret_access_key'],
  ),
  gcs: config(
    {
      bucket: Type.String({ minLength: 1 }),
      prefix: Type.String(),
      project_id: Type.String(),
      auth_mode: StringEnum(['service_account', 'oauth', 'connection', 'adc'] as const, { default: 'oauth' }),
      service_account_json: Secret('service account key (JSON), with auth_mode service_account'),
      connection_id: Type.String({ format: 'uuid', description: 'a connection, with auth_mode connection' }),
      oauth_credentials: SecretObject('OAuth credentials, with auth_mode oauth'),
      file_patterns: FilePatterns,
      sync_mode: SyncMode('incremental'),
    },
    ['bucket'],
  ),
  gdrive: config(
    {
      folder_ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      file_ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      auth_mode: StringEnum(['service_account', 'oauth', 'connection'] as const, { default: 'service_account' }),
      service_account_json: Secret('service account key (JSON); share the folders or files with its email first'),
      connection_id: Type.String({ format: 'uuid' }),
      oauth_credentials: SecretObject('OAuth credentials'),
      drive_id: Type.String({ description: 'a shared drive' }),
      mime_types: Type.Array(Type.String({ minLength: 1 }), { description: 'only these types' }),
      sync_mode: SyncMode('incremental'),
    },
    [],
    { anyOf: [{ required: ['folder_ids'] }, { required: ['file_ids'] }], description: 'give folder_ids or file_ids, and service_account_json or connection_id' },
  ),
  github: config(
    {
      installation_id: Type.Integer({ minimum: 1, description: 'the read-only GitHub App installation' }),
      repositories: Type.Array(Type.String({ pattern: '^[^/\\s]+/[^/\\s]+$' }), { minItems: 1, description: 'owner/repo' }),
      ...RefFields,
      include_pull_requests: Type.Boolean({ default: true }),
      include_review_threads: Type.Boolean({ default: true }),
      include_direct_commits: Type.Boolean({ default: true }),
      ...CodeFilters,
    },
    ['installation_id', 'repositories'],
  ),
  gitlab: config(
    {
      groups: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
      projects: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'paths with namespace' }),
      auth_mode: StringEnum(['oauth', 'token'] as const, { default: 'oauth', description: 'oauth: connection_id; token: access_token' }),
      gitlab_url: Type.String({ pattern: '^https?://', default: 'https://gitlab.com' }),
      connection_id: Type.String({ format: 'uuid' }),
      access_token: Secret('personal or group access token, with auth_mode token'),
      ...RefFields,
      include_merge_requests: Type.Boolean({ default: true }),
      include_review_threads: Type.Boolean({ default: true }),
      include_direct_commits: Type.Boolean({ default: true }),
      ...CodeFilters,
    },
    [],
    { description: 'at least one entry across groups and projects' },
  ),
  jira: config(
    {
      cloud_id: Type.String({ minLength: 1, description: 'the site id' }),
      access_token: Secret('OAuth access token'),
      connection_id: Type.String({ format: 'uuid' }),
      project_keys: Type.Array(Type.String({ minLength: 1 })),
      jql: Type.String({ description: 'issue filter' }),
      include_comments: Type.Boolean({ default: true }),
      sync_mode: SyncMode('incremental'),
    },
    ['cloud_id'],
  ),
  confluence: config(
    {
      cloud_id: Type.String({ minLength: 1 }),
      base_url: Type.String({ pattern: '^https?://' }),
      auth_mode: StringEnum(['basic', 'oauth', 'connection'] as const, { default: 'basic', description: 'basic: username and api_token' }),
      username: Type.String({ minLength: 1 }),
      api_token: Secret('API token, with auth_mode basic'),
      connection_id: Type.String({ format: 'uuid' }),
      oauth_credentials: SecretObject('OAuth credentials'),
      spaces: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'empty: every space the credentials see' }),
      include_attachments: Type.Boolean({ default: false }),
      sync_mode: SyncMode('incremental'),
    },
    [],
    { anyOf: [{ required: ['cloud_id'] }, { required: ['base_url'] }], description: 'give cloud_id or base_url' },
  ),
  file_upload: config(
    {
      storage_provider: StringEnum(['s3', 'local'] as const, { default: 's3', description: "where originals are kept: the service's object storage (S3 when configured, else its data directory)" }),
      sync_mode: SyncMode('full'),
    },
    [],
  ),
};

export const SOURCE_TYPE_NAMES: Record<SourceType, string> = {
  web: 'Web crawl',
  s3: 'Amazon S3 (or S3-compatible)',
  gcs: 'Google Cloud Storage',
  gdrive: 'Google Drive',
  github: 'GitHub',
  gitlab: 'GitLab',
  jira: 'Jira',
  confluence: 'Confluence',
  file_upload: 'File upload',
};

/** Types whose access needs credentials (a key, a token, a connection). */
export const SUPPORTS_AUTH: Record<SourceType, boolean> = Object.fromEntries(SOURCE_TYPES.map((t) => [t, t !== 'web' && t !== 'file_upload'])) as Record<SourceType, boolean>;

/** The secret fields of a type's config. */
export function secretFields(type: SourceType): string[] {
  const props = SOURCE_CONFIGS[type].properties as Record<string, { 'x-secret'?: boolean }>;
  return Object.entries(props).filter(([, s]) => s['x-secret'] === true).map(([k]) => k);
}

/** Rules a schema cannot say, checked after it (the message names the fields). */
export function crossFieldProblem(type: SourceType, c: Record<string, unknown>): string | null {
  const has = (k: string) => c[k] !== undefined;
  switch (type) {
    case 'gdrive':
      if (c.auth_mode === 'service_account' && !has('service_account_json') && !has('connection_id')) return 'config needs service_account_json or connection_id';
      if (c.auth_mode === 'connection' && !has('connection_id')) return 'config.connection_id is required with auth_mode connection';
      return null;
    case 'gcs':
      if (c.auth_mode === 'service_account' && !has('service_account_json')) return 'config.service_account_json is required with auth_mode service_account';
      if (c.auth_mode === 'connection' && !has('connection_id')) return 'config.connection_id is required with auth_mode connection';
      return null;
    case 'gitlab':
      if (((c.groups as unknown[]) ?? []).length + ((c.projects as unknown[]) ?? []).length === 0) return 'config needs at least one entry in groups or projects';
      if (c.auth_mode === 'token' && !has('access_token')) return 'config.access_token is required with auth_mode token';
      if (c.auth_mode === 'oauth' && !has('connection_id')) return 'config.connection_id is required with auth_mode oauth';
      return null;
    case 'github':
      if (c.ref_mode === 'explicit' && ((c.refs as unknown[]) ?? []).length === 0) return 'config.refs is required with ref_mode explicit';
      return null;
    case 'jira':
      if (!has('access_token') && !has('connection_id')) return 'config needs access_token or connection_id';
      return null;
    case 'confluence':
      if (c.auth_mode === 'basic' && (!has('username') || !has('api_token'))) return 'config needs username and api_token with auth_mode basic';
      if (c.auth_mode === 'connection' && !has('connection_id')) return 'config.connection_id is required with auth_mode connection';
      return null;
    default:
      return null;
  }
}
