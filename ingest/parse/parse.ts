/** A file's bytes to a parsed document, by format. */
import type { ParsedDocument } from './document.js';
import { parseCode } from './formats/code.js';
import { parseCsv } from './formats/csv.js';
import { detect, type Format } from './formats/detect.js';
import { parseDocx } from './formats/docx.js';
import { parseHtml, type Selectors } from './formats/html.js';
import { parseMarkdown } from './formats/markdown.js';
import { parsePdf } from './formats/pdf.js';
import { parseText } from './formats/text.js';
import { parseXlsx } from './formats/xlsx.js';

export async function parseBytes(bytes: Uint8Array, name: string, contentType: string, selectors?: Selectors): Promise<{ format: Format; doc: ParsedDocument }> {
  const format = detect(bytes, name, contentType);
  const text = () => new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
  switch (format) {
    case 'pdf':
      return { format, doc: await parsePdf(bytes) };
    case 'docx':
      return { format, doc: await parseDocx(bytes) };
    case 'xlsx':
      return { format, doc: await parseXlsx(bytes) };
    case 'html':
      return { format, doc: parseHtml(text(), selectors) };
    case 'markdown':
      return { format, doc: parseMarkdown(text()) };
    case 'csv':
      return { format, doc: parseCsv(text()) };
    case 'tsv':
      return { format, doc: parseCsv(text(), '\t') };
    case 'code':
      return { format, doc: parseCode(text()) };
    case 'text':
      return { format, doc: parseText(text()) };
  }
}
