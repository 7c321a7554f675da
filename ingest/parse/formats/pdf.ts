/**
 * PDF text per page (pdfjs-dist, its legacy build for Node): lines are the text items up to an
 * end of line; a paragraph ends where the gap to the next line is clearly wider than the page's
 * usual line spacing. Encrypted and malformed files fail with their own reasons; a PDF without
 * text (a scan) is an empty document.
 */
import { ParseError, type Block, type ParsedDocument } from '../document.js';
import { checkPdfStreams } from './pdf-guard.js';

/** What this parser reads of pdfjs's text items. */
interface TextItem {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

export async function parsePdf(bytes: Uint8Array): Promise<ParsedDocument> {
  checkPdfStreams(bytes);
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  let doc;
  try {
    doc = await pdfjs.getDocument({ data: bytes, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 }).promise;
  } catch (e) {
    const name = (e as Error)?.name;
    if (name === 'PasswordException') throw new ParseError('encrypted', 'the PDF is encrypted (password protected)');
    throw new ParseError('corrupt_file', `the PDF cannot be read: ${(e as Error)?.message ?? e}`);
  }
  try {
    const blocks: Block[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      blocks.push(...pageBlocks(content.items.filter((i) => 'str' in i) as TextItem[], n));
      page.cleanup();
    }
    const meta = (await doc.getMetadata().catch(() => null))?.info as { Title?: string } | undefined;
    return { title: meta?.Title?.trim() || null, blocks, pages: doc.numPages };
  } finally {
    await doc.destroy();
  }
}

function pageBlocks(items: TextItem[], page: number): Block[] {
  const lines: { text: string; y: number; height: number }[] = [];
  let text = '';
  let y: number | null = null;
  let height = 0;
  for (const item of items) {
    if (y === null && item.str.trim() !== '') y = item.transform[5];
    text += item.str;
    height = Math.max(height, item.height);
    if (item.hasEOL) {
      if (text.trim() !== '') lines.push({ text: text.trim(), y: y ?? 0, height });
      text = '';
      y = null;
      height = 0;
    }
  }
  if (text.trim() !== '') lines.push({ text: text.trim(), y: y ?? 0, height });
  const gaps = lines.slice(1).map((l, i) => Math.abs(lines[i].y - l.y)).filter((g) => g > 0).sort((a, b) => a - b);
  const usual = gaps.length > 0 ? gaps[Math.floor(gaps.length / 2)] : 0;
  const blocks: Block[] = [];
  let para: string[] = [];
  lines.forEach((line, i) => {
    const gap = i > 0 ? Math.abs(lines[i - 1].y - line.y) : 0;
    if (para.length > 0 && usual > 0 && gap > usual * 1.6) {
      blocks.push({ kind: 'paragraph', text: joinLines(para), page });
      para = [];
    }
    para.push(line.text);
  });
  if (para.length > 0) blocks.push({ kind: 'paragraph', text: joinLines(para), page });
  return blocks;
}

/** Lines of one paragraph: a word hyphenated across a line end is joined. */
function joinLines(lines: string[]): string {
  return lines.reduce((acc, l) => (acc === '' ? l : /\w-$/.test(acc) ? acc.slice(0, -1) + l : `${acc} ${l}`), '');
}
