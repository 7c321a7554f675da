/** Table rows as blocks: "column: value; ..." for each data row under a header row. */
import type { Block } from '../document.js';

export function rowBlocks(rows: string[][], sheet: string | undefined): Block[] {
  const headerAt = rows.findIndex((r) => r.some((c) => c.trim() !== ''));
  if (headerAt < 0) return [];
  const columns = rows[headerAt].map((c, i) => c.trim() || `column ${i + 1}`);
  const blocks: Block[] = [];
  rows.slice(headerAt + 1).forEach((row, i) => {
    const cells = row.map((v, j) => [columns[j] ?? `column ${j + 1}`, v.trim()]).filter(([, v]) => v !== '');
    if (cells.length > 0) blocks.push({ kind: 'row', text: cells.map(([c, v]) => `${c}: ${v}`).join('; '), row: i + 1, columns, ...(sheet !== undefined ? { sheet } : {}) });
  });
  return blocks;
}
