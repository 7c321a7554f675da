/** A dataset's document catalog: cursor pages and downloads of originals. */
import type { DatasetService } from '../../catalog/datasets/service.js';
import { badRequest } from '../../errors/codes.js';
import type { DocumentService } from '../../ingest/documents/service.js';
import * as I from '../../ingest/requests.js';
import type { Route } from '../http/router.js';
import { json, type Response } from '../http/types.js';

export function documentRoutes(datasets: DatasetService, documents: DocumentService): Route[] {
  return [
    {
      method: 'GET', path: '/datasets/:datasetId/documents', auth: 'key', summary: "The dataset's documents (cursor pages)", responses: { 200: I.DocumentList },
      description:
        'Query limit (1-200, default 50), cursor (next_cursor of the page before), status (processing, ready, failed). ' +
        'Answers {documents, next_cursor}; next_cursor is null on the last page. No offsets, no totals.',
      handler: async ({ req, caller, params }) => {
        const r = datasets.get(caller.orgId, params.datasetId);
        const raw = req.query.get('limit');
        const limit = raw === null ? 50 : Number(raw);
        if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw badRequest('limit must be an integer from 1 to 200');
        return json(200, documents.list(r.id, limit, req.query.get('cursor'), req.query.get('status')));
      },
    },
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
          headers: { 'content-type': headerSafe(contentType), 'content-length': String(body.size), 'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}` },
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
