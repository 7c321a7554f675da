/**
 * Atlassian Document Format (the JSON Jira keeps descriptions and comments in) to plain text:
 * text nodes joined, block nodes on lines of their own, list items marked, mentions and emoji by
 * their text, code blocks kept as written.
 */
interface AdfNode {
  type?: string;
  text?: string;
  attrs?: Record<string, unknown>;
  content?: AdfNode[];
}

const BLOCKS = new Set(['paragraph', 'heading', 'blockquote', 'codeBlock', 'rule', 'panel', 'table', 'tableRow', 'mediaSingle', 'expand']);

export function adfToText(doc: unknown): string {
  if (typeof doc === 'string') return doc;
  if (!doc || typeof doc !== 'object') return '';
  const out: string[] = [];
  walk(doc as AdfNode, out, '');
  return out.join('').replace(/\n{3,}/g, '\n\n').trim();
}

function walk(node: AdfNode, out: string[], indent: string): void {
  switch (node.type) {
    case 'text':
      out.push(node.text ?? '');
      return;
    case 'hardBreak':
      out.push('\n');
      return;
    case 'mention':
    case 'emoji':
    case 'status':
      out.push(String(node.attrs?.text ?? node.attrs?.shortName ?? ''));
      return;
    case 'inlineCard':
      out.push(String(node.attrs?.url ?? ''));
      return;
    case 'listItem':
      out.push(`${indent}- `);
      for (const c of node.content ?? []) walk(c, out, indent + '  ');
      return;
    case 'tableCell':
    case 'tableHeader':
      for (const c of node.content ?? []) walk(c, out, indent);
      out.push(' | ');
      return;
  }
  if (node.type === 'heading') out.push('#'.repeat(Number(node.attrs?.level ?? 1)) + ' ');
  for (const c of node.content ?? []) walk(c, out, indent);
  if (node.type && BLOCKS.has(node.type)) out.push('\n\n');
}
