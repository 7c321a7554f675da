/** DOCX through mammoth's HTML (headings stay headings), then the HTML parser. */
import mammoth from 'mammoth';
import { ParseError, type ParsedDocument } from '../document.js';
import { parseHtml } from './html.js';
import { checkZip } from './zip-guard.js';

export async function parseDocx(bytes: Uint8Array): Promise<ParsedDocument> {
  checkZip(bytes);
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })).value;
  } catch (e) {
    throw new ParseError('corrupt_file', `the DOCX cannot be read: ${(e as Error)?.message ?? e}`);
  }
  const doc = parseHtml(`<body>${html}</body>`);
  return { ...doc, title: doc.blocks.find((b) => b.kind === 'heading')?.text ?? null };
}
