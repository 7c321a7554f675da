/** The media type of a file by its extension, for sources that do not say (S3 listings, archives). */
import { extname } from 'node:path';

const BY_EXTENSION: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.json': 'application/json',
  '.xml': 'application/xml',
};

export function mediaTypeOf(name: string): string {
  return BY_EXTENSION[extname(name).toLowerCase()] ?? 'application/octet-stream';
}
