/** Markdown through marked's lexer: headings with their levels, paragraphs, lists, code, tables. */
import { Lexer, type Token, type Tokens } from 'marked';
import type { Block, ParsedDocument } from '../document.js';

export function parseMarkdown(text: string): ParsedDocument {
  const blocks: Block[] = [];
  walk(Lexer.lex(text), blocks);
  const h1 = blocks.find((b) => b.kind === 'heading' && b.level === 1);
  return { title: h1?.text ?? null, blocks };
}

function walk(tokens: Token[], out: Block[]): void {
  for (const t of tokens) {
    switch (t.type) {
      case 'heading':
        push(out, { kind: 'heading', level: (t as Tokens.Heading).depth, text: inline((t as Tokens.Heading).tokens) });
        break;
      case 'paragraph':
      case 'text':
        push(out, { kind: 'paragraph', text: 'tokens' in t && t.tokens ? inline(t.tokens) : (t as Tokens.Text).text });
        break;
      case 'code':
        push(out, { kind: 'code', text: (t as Tokens.Code).text });
        break;
      case 'list':
        for (const item of (t as Tokens.List).items) {
          const inner: Block[] = [];
          walk(item.tokens, inner);
          push(out, { kind: 'paragraph', text: `- ${inner.map((b) => b.text).join(' ')}` });
        }
        break;
      case 'blockquote':
        walk((t as Tokens.Blockquote).tokens, out);
        break;
      case 'table': {
        const table = t as Tokens.Table;
        const columns = table.header.map((c) => inline(c.tokens));
        table.rows.forEach((row, i) => {
          const cells = row.map((c, j) => `${columns[j] ?? j + 1}: ${inline(c.tokens)}`).filter((c) => !c.endsWith(': '));
          push(out, { kind: 'row', text: cells.join('; '), row: i + 1, columns });
        });
        break;
      }
      case 'html':
        push(out, { kind: 'paragraph', text: (t as Tokens.HTML).text.replace(/<[^>]*>/g, ' ') });
        break;
      default:
        break;
    }
  }
}

/** The visible text of inline tokens: emphasis and links keep their words, markup goes. */
function inline(tokens: Token[] | undefined): string {
  if (!tokens) return '';
  return tokens
    .map((t) => {
      if ('tokens' in t && Array.isArray(t.tokens) && t.tokens.length > 0) return inline(t.tokens);
      if (t.type === 'br') return '\n';
      if (t.type === 'image') return (t as Tokens.Image).text;
      return 'text' in t && typeof t.text === 'string' ? decode(t.text) : '';
    })
    .join('');
}

function decode(s: string): string {
  return s.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'");
}

function push(out: Block[], b: Block): void {
  const text = b.text.replace(/[ \t]+/g, ' ').trim();
  if (text !== '') out.push({ ...b, text });
}
