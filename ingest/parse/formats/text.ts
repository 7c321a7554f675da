/** Plain text: paragraphs are runs of non-blank lines. */
import { paragraphs, type ParsedDocument } from '../document.js';

export function parseText(text: string): ParsedDocument {
  return { title: null, blocks: paragraphs(text) };
}
