/** A dataset's document catalog: cursor pages and downloads of originals. */
import type { DatasetService } from '../../catalog/datasets/service.js';
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../contract/json-schema.js';
import { DOCUMENT_STATUSES } from '../../catalog/documents/store.js';
import type { DocumentService } from '../../ingest/documents/service.js';
import * as I from '../../ingest/requests.js';
import { route, type Route } from '../http/router.js';
import { json, type Response } from '../http/types.js';
import { attachmentDisposition } from '../../objects/object-store.js';

export function documentRoutes(datasets: DatasetService, documents: DocumentService): Route[] {
  return [
    route({
      method: 'GET', path: '/datasets/:datasetId/documents', auth: 'key', summary: "The dataset's documents (cursor pages)", responses: { 200: I.DocumentList },
      query: Type.Object({
        limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'documents per page' }),
        cursor: Type.Optional(Type.String({ description: 'next_cursor of the page before' })),
        status: Type.Optional(StringEnum(DOCUMENT_STATUSES, { description: 'only documents in this status' })),
      }),
      description: 'Answers {documents, next_cursor}; next_cursor is null on the last page. A catalog that grows while it is read pages by cursor: no offsets, no totals.',
      handler: async ({ caller, params, query }) => {
        const r = datasets.get(caller.orgId, params.datasetId);
        return json(200, documents.list(r.id, query.limit, query.cursor ?? null, query.status ?? null));
      },
    }),
    {
      method: 'GET', path: '/datasets/:datasetId/documents/:documentId/download', auth: 'key', summary: "A document's original bytes",
      description:
        'Streams the original (Content-Type and Content-Disposition of the document), or redirects (302) to a URL valid five minutes ' +
        'when object storage keeps it; clients follow redirects. 410 document_unavailable when the original was not retained or is gone.',
      handler: async ({ caller, params }): Promise<Response> => {
        const r = datasets.get(caller.orgId, params.datasetId);
        const { name, contentType, body } = await documents.download(r.id, params.documentId);
        if ('redirect' in body) return { status: 302, headers: { location: body.redirect } };
        return {
          status: 200,
          headers: { 'content-type': headerSafe(contentType), 'content-length': String(body.size), 'content-disposition': attachmentDisposition(name) },
          body: body.stream,
        };
      },
    },
  ];
}

/**
 * A document's content type as a header value: it comes from whoever uploaded or served the
 * file (an upload's declared type, a bucket's metadata): a CR LF in it would end the header and
 * start one of the uploader's choosing, and node:http throws on any character a header cannot hold.
 */
export function headerSafe(contentType: string | null | undefined): string {
  return contentType && !/[^\t\u0020-\u007e\u0080-\u00ff]/.test(contentType) ? contentType : 'application/octet-stream';
}
