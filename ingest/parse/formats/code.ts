/**
 * Source code: blocks are runs of lines between blank lines (functions, classes, paragraphs of
 * a config file), kept as written; the chunker packs them to the model's size.
 */
import type { Block, ParsedDocument } from '../document.js';

export function parseCode(text: string): ParsedDocument {
  const blocks: Block[] = [];
  for (const part of text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n+/)) {
    const t = part.replace(/\s+$/, '');
    if (t.trim() !== '') blocks.push({ kind: 'code', text: t.replace(/^\n+/, '') });
  }
  return { title: null, blocks };
}
