/** XLSX through exceljs: per sheet, the first non-empty row names the columns; each row after it is a block. */
import ExcelJS from 'exceljs';
import { ParseError, type Block, type ParsedDocument } from '../document.js';
import { rowBlocks } from './rows.js';
import { checkZip } from './zip-guard.js';

export async function parseXlsx(bytes: Uint8Array): Promise<ParsedDocument> {
  checkZip(bytes);
  const book = new ExcelJS.Workbook();
  try {
    await book.xlsx.load(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as never);
  } catch (e) {
    throw new ParseError('corrupt_file', `the XLSX cannot be read: ${(e as Error)?.message ?? e}`);
  }
  const blocks: Block[] = [];
  book.eachSheet((sheet) => {
    const rows: string[][] = [];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const cells: string[] = [];
      row.eachCell({ includeEmpty: true }, (cell, col) => (cells[col - 1] = cell.text ?? ''));
      rows.push(Array.from(cells, (c) => c ?? ''));
    });
    blocks.push(...rowBlocks(rows, sheet.name));
  });
  return { title: book.title || null, blocks };
}
