/**
 * Google Drive (@googleapis/drive, API v3 at the deployment's `SABLE_GDRIVE_API_URL`): the files
 * of `folder_ids` (recursively) and `file_ids`, in My Drive or a shared drive (`drive_id`),
 * optionally only `mime_types`. Google Docs and Slides are exported as text, Sheets as CSV; other
 * Google-native types (forms, maps) are not readable and are left out. A file's md5Checksum (else
 * its version number) is its change signal. Credentials as for gcs (google-auth.ts).
 */
import { auth, drive, type drive_v3 } from '@googleapis/drive';
import type { Readable } from 'node:stream';
import type { StagedFile } from '../../objects/object-store.js';
import type { Connector, ConnectorContext, ItemInfo, ItemRef, SourceItem, Validation } from './connector.js';
import type { GoogleAuthConfig, GoogleTokens } from './google-auth.js';
import { statusOf } from './retry.js';
import { stageStream } from './staging.js';

interface DriveConfig extends GoogleAuthConfig {
  folder_ids?: string[];
  file_ids?: string[];
  drive_id?: string;
  mime_types?: string[];
}

const SCOPES = ['https://www.googleapis.com/auth/drive.readonly'];
const FOLDER = 'application/vnd.google-apps.folder';
/** Google-native types and what they are exported as. */
const EXPORTS: Record<string, { as: string; ext: string }> = {
  'application/vnd.google-apps.document': { as: 'text/plain', ext: '.txt' },
  'application/vnd.google-apps.presentation': { as: 'text/plain', ext: '.txt' },
  'application/vnd.google-apps.spreadsheet': { as: 'text/csv', ext: '.csv' },
};
/** Items of Google-native documents are read by export: their ids say so. */
const EXPORTED = 'export:';
const FIELDS = 'id, name, mimeType, size, md5Checksum, version, modifiedTime, webViewLink';
const MAX_BYTES = 100 * 1024 * 1024;

export class DriveConnector implements Connector {
  readonly type = 'gdrive' as const;
  readonly retainsOriginals = false;

  constructor(
    private readonly stagingDir: string,
    private readonly rootUrl: string,
    private readonly google: GoogleTokens,
  ) {}

  async *list(ctx: ConnectorContext): AsyncIterable<SourceItem> {
    const c = ctx.config as unknown as DriveConfig;
    const api = await this.api(ctx, true);
    const seen = new Set<string>();
    for (const id of c.file_ids ?? []) {
      const f = (await this.call(() => api.files.get({ fileId: id, fields: FIELDS, supportsAllDrives: true }), `file ${id}`)).data;
      const item = this.item(f, '', c);
      if (item && !seen.has(item.id)) seen.add(item.id), yield item;
    }
    const folders = (c.folder_ids ?? []).map((id) => ({ id, path: '' }));
    const visited = new Set<string>();
    while (folders.length > 0) {
      const folder = folders.shift()!;
      if (visited.has(folder.id)) continue;
      visited.add(folder.id);
      let pageToken: string | undefined;
      do {
        const page = (
          await this.call(
            () =>
              api.files.list({
                q: `'${folder.id.replace(/'/g, "\\'")}' in parents and trashed = false`,
                fields: `nextPageToken, files(${FIELDS})`,
                pageSize: 1000,
                pageToken,
                supportsAllDrives: true,
                includeItemsFromAllDrives: true,
                ...(c.drive_id ? { corpora: 'drive', driveId: c.drive_id } : {}),
              }),
            `folder ${folder.id}`,
          )
        ).data;
        for (const f of page.files ?? []) {
          if (f.mimeType === FOLDER) {
            folders.push({ id: f.id!, path: `${folder.path}${f.name}/` });
            continue;
          }
          const item = this.item(f, folder.path, c);
          if (item && !seen.has(item.id)) seen.add(item.id), yield item;
        }
        pageToken = page.nextPageToken ?? undefined;
      } while (pageToken);
    }
  }

  async fetch(ctx: ConnectorContext, item: ItemRef): Promise<StagedFile> {
    const api = await this.api(ctx);
    const id = item.item?.id ?? item.file_path;
    const res = id.startsWith(EXPORTED)
      ? await this.call(() => api.files.export({ fileId: id.slice(EXPORTED.length), mimeType: item.content_type }, { responseType: 'stream' }), `exporting ${item.file_name}`)
      : await this.call(() => api.files.get({ fileId: id, alt: 'media', supportsAllDrives: true }, { responseType: 'stream' }), `reading ${item.file_name}`);
    return stageStream(res.data as unknown as Readable, this.stagingDir, MAX_BYTES, ctx.signal);
  }

  async validate(ctx: ConnectorContext): Promise<Validation> {
    const c = ctx.config as unknown as DriveConfig;
    const samples: Validation['samples'] = [];
    const warnings: string[] = [];
    const api = await this.api(ctx);
    for (const id of c.folder_ids ?? []) {
      try {
        const page = (await api.files.list({ q: `'${id.replace(/'/g, "\\'")}' in parents and trashed = false`, fields: `files(${FIELDS})`, pageSize: 5, supportsAllDrives: true, includeItemsFromAllDrives: true, ...(c.drive_id ? { corpora: 'drive', driveId: c.drive_id } : {}) })).data;
        if (!page.files?.length) warnings.push(`folder ${id} is empty, or not shared with these credentials`);
        for (const f of page.files ?? []) if (samples.length < 5) samples.push({ title: f.name ?? f.id!, url: f.webViewLink ?? null });
      } catch (e) {
        if (statusOf(e) === 401) throw new Error(describe(e, `folder ${id}`));
        warnings.push(`folder ${id} cannot be read: ${describe(e, `folder ${id}`)}`);
      }
    }
    for (const id of c.file_ids ?? []) {
      try {
        const f = (await api.files.get({ fileId: id, fields: FIELDS, supportsAllDrives: true })).data;
        if (samples.length < 5) samples.push({ title: f.name ?? id, url: f.webViewLink ?? null });
      } catch (e) {
        if (statusOf(e) === 401) throw new Error(describe(e, `file ${id}`));
        warnings.push(`file ${id} cannot be read (share it with the service account first)`);
      }
    }
    return { samples, warnings };
  }

  async describe(ctx: ConnectorContext, uri: URL): Promise<ItemInfo> {
    const id = uri.hostname || uri.pathname.replace(/^\/+/, '');
    try {
      const f = (await this.call(async () => (await this.api(ctx)).files.get({ fileId: id, fields: FIELDS, supportsAllDrives: true }), `file ${id}`)).data;
      const exported = EXPORTS[f.mimeType ?? ''];
      const readable = !f.mimeType?.startsWith('application/vnd.google-apps.') || !!exported;
      return { name: f.name ?? id, size: f.size ? Number(f.size) : null, content_type: exported?.as ?? f.mimeType ?? null, modified_at: f.modifiedTime ?? null, readable, ...(readable ? {} : { error: `${f.mimeType} files cannot be read as text` }) };
    } catch (e) {
      return { name: id, size: null, content_type: null, modified_at: null, readable: false, error: (e as Error).message };
    }
  }

  async stream(ctx: ConnectorContext, id: string): Promise<{ stream: Readable; contentType: string; size: number | null }> {
    const api = await this.api(ctx);
    const f = (await this.call(() => api.files.get({ fileId: id, fields: FIELDS, supportsAllDrives: true }), `file ${id}`)).data;
    const exported = EXPORTS[f.mimeType ?? ''];
    const res = exported
      ? await this.call(() => api.files.export({ fileId: id, mimeType: exported.as }, { responseType: 'stream' }), `exporting ${f.name}`)
      : await this.call(() => api.files.get({ fileId: id, alt: 'media', supportsAllDrives: true }, { responseType: 'stream' }), `reading ${f.name}`);
    return { stream: res.data as unknown as Readable, contentType: exported?.as ?? f.mimeType ?? 'application/octet-stream', size: exported ? null : f.size ? Number(f.size) : null };
  }

  maxBytes(): number {
    return MAX_BYTES;
  }

  /** A Drive file as an item, or null when it is not wanted or not readable. */
  private item(f: drive_v3.Schema$File, folderPath: string, c: DriveConfig): SourceItem | null {
    if (!f.id || !f.name || !f.mimeType || f.mimeType === FOLDER) return null;
    if (c.mime_types?.length && !c.mime_types.includes(f.mimeType)) return null;
    const exported = EXPORTS[f.mimeType];
    if (f.mimeType.startsWith('application/vnd.google-apps.') && !exported) return null;
    return {
      id: exported ? `${EXPORTED}${f.id}` : f.id,
      name: exported && !f.name.endsWith(exported.ext) ? `${f.name}${exported.ext}` : f.name,
      path: `${folderPath}${f.name}`,
      url: f.webViewLink ?? null,
      contentType: exported ? exported.as : f.mimeType,
      size: f.size ? Number(f.size) : null,
      // Native documents have no checksum: their version number changes with every edit.
      version: f.md5Checksum ? `md5:${f.md5Checksum}` : f.version ? `v${f.version}` : (f.modifiedTime ?? null),
    };
  }

  private async api(ctx: ConnectorContext, fresh = false): Promise<drive_v3.Drive> {
    const c = ctx.config as unknown as DriveConfig;
    // The Drive client checks its own google-auth-library's classes: its OAuth2, with our token.
    const client = new auth.OAuth2();
    client.setCredentials({ access_token: await this.google.token(ctx, c, SCOPES, fresh) });
    return drive({ version: 'v3', auth: client, rootUrl: this.rootUrl });
  }

  private async call<T>(fn: () => Promise<T>, what: string): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw new Error(describe(e, what));
    }
  }
}

function describe(e: unknown, what: string): string {
  const status = statusOf(e);
  if (status === 401) return `Google Drive refused the credentials while reading ${what} (401)`;
  if (status === 403) return `the credentials may not read ${what} (403): share it with the service account's email`;
  if (status === 404) return `Google Drive found no ${what} (404), or it is not shared with these credentials`;
  return `Google Drive failed while reading ${what}: ${(e as Error).message}`;
}
