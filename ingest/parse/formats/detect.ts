/**
 * Which parser a file needs: from its bytes first (PDF, zip and OLE signatures), then its media
 * type and extension. Password-protected Office files are OLE containers, not zips: they fail as
 * encrypted; legacy .doc/.xls and other binaries fail as unsupported types.
 */
import { extname } from 'node:path';
import { ParseError } from '../document.js';

export type Format = 'pdf' | 'docx' | 'xlsx' | 'html' | 'markdown' | 'csv' | 'tsv' | 'code' | 'text';

const CODE = new Set([
  '.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.py', '.go', '.rs', '.java', '.kt', '.scala', '.c', '.h', '.cc', '.cpp', '.hpp', '.cs', '.rb', '.php',
  '.swift', '.sh', '.bash', '.sql', '.yaml', '.yml', '.toml', '.ini', '.json', '.xml', '.gradle', '.lua', '.r', '.pl', '.dockerfile', '.proto', '.tf',
]);

export function detect(bytes: Uint8Array, name: string, contentType: string): Format {
  const ext = extname(name).toLowerCase();
  const type = contentType.split(';')[0].trim().toLowerCase();
  const head = Buffer.from(bytes.subarray(0, 8));
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  const zip = head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
  const ole = head.length >= 4 && head.readUInt32BE(0) === 0xd0cf11e0;
  const word = ext === '.docx' || type.includes('wordprocessingml');
  const sheet = ext === '.xlsx' || type.includes('spreadsheetml');
  if (ole && (word || sheet)) throw new ParseError('encrypted', 'the Office file is encrypted (password protected)');
  if (zip && word) return 'docx';
  if (zip && sheet) return 'xlsx';
  if (zip || ole || word || sheet || ext === '.doc' || ext === '.xls' || ext === '.ppt' || ext === '.pptx') {
    throw new ParseError('unsupported_type', `${name} (${type || 'no type'}) is not a supported format: PDF, DOCX, XLSX, HTML, Markdown, CSV, text or source code`);
  }
  if (type === 'application/pdf' || ext === '.pdf') throw new ParseError('corrupt_file', 'the file is named a PDF but does not start as one');
  if (looksBinary(bytes)) throw new ParseError('unsupported_type', `${name} (${type || 'no type'}) holds binary data, not text`);
  if (type === 'text/html' || type === 'application/xhtml+xml' || ext === '.html' || ext === '.htm' || ext === '.xhtml') return 'html';
  if (type === 'text/markdown' || ext === '.md' || ext === '.markdown') return 'markdown';
  if (type === 'text/tab-separated-values' || ext === '.tsv') return 'tsv';
  if (type === 'text/csv' || ext === '.csv') return 'csv';
  if (CODE.has(ext) || type.startsWith('text/x-') || type === 'application/javascript' || type === 'application/json') return 'code';
  return 'text';
}

/** A NUL byte in the first 8 KiB: no text format has one. */
function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}
