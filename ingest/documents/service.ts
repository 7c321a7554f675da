/**
 * A dataset's document catalog as the API reads it: cursor pages (no offsets, no totals) with a
 * status filter, and downloads of originals (streamed, or a redirect to a short-lived URL when
 * object storage keeps them); a document whose original was not kept is 410 document_unavailable.
 */
import { badRequest, SableError } from '../../errors/codes.js';
import type { ObjectStore } from '../../objects/object-store.js';
import type { Readable } from 'node:stream';
import { DOCUMENT_STATUSES, publicDocument, type DocumentStatus, type DocumentStore } from '../../catalog/documents/store.js';

const DOWNLOAD_URL_SECONDS = 300;

export class DocumentService {
  constructor(
    private readonly store: DocumentStore,
    private readonly objects: ObjectStore,
  ) {}

  list(datasetId: string, limit: number, cursor: string | null, status: string | null) {
    if (status !== null && !(DOCUMENT_STATUSES as readonly string[]).includes(status)) throw badRequest(`status must be one of ${DOCUMENT_STATUSES.join(', ')}`);
    let after: string | null = null;
    if (cursor !== null) {
      after = Buffer.from(cursor, 'base64url').toString('utf8');
      if (!/^[0-9a-f-]{36}$/.test(after)) throw badRequest('cursor is not one this service gave (pass next_cursor as it came)');
    }
    const page = this.store.page(datasetId, after, limit, (status ?? undefined) as DocumentStatus | undefined);
    const last = page.documents.at(-1);
    return { documents: page.documents.map(publicDocument), next_cursor: page.more && last ? Buffer.from(last.id).toString('base64url') : null };
  }

  async download(datasetId: string, id: string): Promise<{ name: string; contentType: string; body: { redirect: string } | { stream: Readable; size: number } }> {
    const doc = this.store.get(datasetId, id);
    if (!doc) throw new SableError('document_not_found', `document ${id} was not found in dataset ${datasetId}`);
    if (doc.storage_key === null) throw new SableError('document_unavailable', `the original of ${doc.name} was not retained (its source is read in place)`);
    const body = await this.objects.download(doc.storage_key, DOWNLOAD_URL_SECONDS, { name: doc.name, contentType: doc.content_type });
    if (!body) throw new SableError('document_unavailable', `the original of ${doc.name} is no longer stored`);
    return { name: doc.name, contentType: doc.content_type, body };
  }
}
