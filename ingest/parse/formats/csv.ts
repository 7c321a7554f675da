/** CSV (or TSV): the first non-empty row names the columns; each row after it is a block. */
import { parse } from 'csv-parse/sync';
import { ParseError, type ParsedDocument } from '../document.js';
import { rowBlocks } from './rows.js';

export function parseCsv(text: string, delimiter = ','): ParsedDocument {
  let rows: string[][];
  try {
    rows = parse(text, { delimiter, bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true }) as string[][];
  } catch (e) {
    throw new ParseError('corrupt_file', `the CSV cannot be read: ${(e as Error).message}`);
  }
  return { title: null, blocks: rowBlocks(rows, undefined) };
}
