/**
 * What every parser produces: a document as a sequence of blocks (headings, paragraphs, table
 * rows, code), each with where it came from (page, sheet and row). The chunker reads only this.
 */
import type { FileErrorType } from '../../errors/job-errors.js';

export interface Block {
  kind: 'heading' | 'paragraph' | 'row' | 'code';
  text: string;
  /** Heading level, 1 (top) to 6. */
  level?: number;
  /** PDF page, 1-based. */
  page?: number;
  /** Spreadsheet sheet (XLSX) or table name. */
  sheet?: string;
  /** Data row, 1-based (the header row excluded). */
  row?: number;
  /** Header names of the row's table. */
  columns?: string[];
}

export interface ParsedDocument {
  title: string | null;
  blocks: Block[];
  /** Pages of a paged format (PDF). */
  pages?: number;
}

/** A file that cannot be turned into text: it fails alone, with a typed reason. */
export class ParseError extends Error {
  constructor(
    readonly type: FileErrorType,
    message: string,
  ) {
    super(message);
  }
}

/** Paragraphs of plain text: runs of non-blank lines, whitespace inside a line kept. */
export function paragraphs(text: string, extra: Partial<Block> = {}): Block[] {
  const out: Block[] = [];
  for (const part of text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n+/)) {
    const t = part.replace(/[ \t]+\n/g, '\n').trim();
    if (t !== '') out.push({ kind: 'paragraph', text: t, ...extra });
  }
  return out;
}
