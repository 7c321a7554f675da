// Parsers and the chunker on real files built by writer libraries (pdf-lib, docx, exceljs) and by
// hand (an encrypted PDF, a zip bomb), through the parse pool's worker threads as ingestion runs
// them: format, text, provenance, chunk sizes counted by the local model's own tokenizer, and a
// typed failure for each kind of bad file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localTokenizer } from '../../dist/engine/index.js';
import { ParsePool } from '../../dist/ingest/parse/parse-pool.js';
import { chunkingFor } from '../../dist/ingest/pipeline/budget.js';
import { parseBytes } from '../../dist/ingest/parse/parse.js';
import { docxOf, encryptedPdf, oleContainer, pdfOf, pdfWithoutText, prose, xlsxOf, zipBomb, zipOf } from '../support/documents.js';

const LOCAL = chunkingFor('local');

describe('parsing and chunking ingested files', () => {
  let dir: string;
  let pool: ParsePool;
  let n = 0;
  const tokenizer = localTokenizer();
  const tokens = (t: string) => tokenizer.encode(t).ids.length;

  /** Writes the bytes to a file and parses it on the pool, as the ingestion pipeline does. */
  const parse = (name: string, contentType: string, bytes: Uint8Array | string, extra: { maxBytes?: number; timeoutMs?: number; selectors?: Record<string, string> } = {}) => {
    const path = join(dir, `${n++}-${name.replace(/[^\w.]/g, '_')}`);
    writeFileSync(path, bytes);
    return pool.parse({ path, name, contentType, maxBytes: extra.maxBytes ?? 100 * 1024 * 1024, selectors: extra.selectors, chunking: LOCAL }, extra.timeoutMs ?? 60_000);
  };
  const ok = async (...args: Parameters<typeof parse>) => {
    const r = await parse(...args);
    if (!r.ok) throw new Error(`${args[0]} failed: ${r.type}: ${r.message}`);
    return r;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sable-parse-'));
    pool = new ParsePool({ threads: 1 });
  });
  afterAll(async () => {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a PDF page by page: chunks carry their page, the title comes from its metadata', async () => {
    const pdf = await pdfOf(
      [
        ['The first page speaks of lanterns', 'and of the harbor at night.', '', 'A second paragraph on page one.'],
        ['Page two is about copper mines', 'deep under the canyon.'],
      ],
      'Field Notes',
    );
    const r = await ok('notes.pdf', 'application/pdf', pdf);
    expect(r.format).toBe('pdf');
    expect(r.pages).toBe(2);
    expect(r.title).toBe('Field Notes');
    const all = r.chunks.map((c) => c.text).join('\n');
    expect(all).toContain('The first page speaks of lanterns and of the harbor at night.');
    expect(all).toContain('Page two is about copper mines deep under the canyon.');
    const onTwo = r.chunks.find((c) => c.text.includes('copper'))!;
    expect(onTwo.pageEnd).toBe(2);
    expect(r.chunks[0].page).toBe(1);
  });

  it('reads a DOCX with its headings: each chunk knows the heading path above it', async () => {
    const docx = await docxOf([
      { heading: 'Handbook', level: 1, paragraphs: ['Welcome to the team.'] },
      { heading: 'Travel', level: 2, paragraphs: ['Book trains over flights when the trip is under four hours.'] },
      { heading: 'Expenses', level: 2, paragraphs: ['Receipts go in within thirty days.'] },
    ]);
    const r = await ok('handbook.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', docx);
    expect(r.format).toBe('docx');
    expect(r.title).toBe('Handbook');
    const travel = r.chunks.find((c) => c.text.includes('Book trains'))!;
    expect(travel.heading).toBe('Handbook > Travel');
    expect(travel.text.startsWith('Travel')).toBe(true);
    const expenses = r.chunks.find((c) => c.text.includes('Receipts'))!;
    expect(expenses.heading).toBe('Handbook > Expenses');
    expect(expenses).not.toBe(travel);
  });

  it('reads an XLSX as rows: sheet name, row range and column names on every chunk; sheets never share a chunk', async () => {
    const rows = Array.from({ length: 120 }, (_, i) => [`SKU-${i + 1}`, `widget model ${i + 1} in ${['red', 'blue', 'green'][i % 3]}`, (i + 1) * 3]);
    const xlsx = await xlsxOf([
      { name: 'Inventory', header: ['sku', 'description', 'count'], rows },
      { name: 'Suppliers', header: ['name', 'city'], rows: [['Acme', 'Lyon'], ['Globex', 'Porto']] },
    ]);
    const r = await ok('stock.xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', xlsx);
    expect(r.format).toBe('xlsx');
    const inv = r.chunks.filter((c) => c.sheet === 'Inventory');
    expect(inv.length).toBeGreaterThan(1);
    expect(inv[0]).toMatchObject({ rowStart: 1, columnNames: ['sku', 'description', 'count'] });
    expect(inv[0].text.startsWith('sku: SKU-1; description: widget model 1 in red; count: 3')).toBe(true);
    expect(inv.at(-1)!.rowEnd).toBe(120);
    // Row ranges tile the sheet in order (rows are never carried over into the next chunk).
    for (let i = 1; i < inv.length; i++) expect(inv[i].rowStart).toBe(inv[i - 1].rowEnd! + 1);
    const sup = r.chunks.filter((c) => c.sheet === 'Suppliers');
    expect(sup).toHaveLength(1);
    expect(sup[0]).toMatchObject({ rowStart: 1, rowEnd: 2, columnNames: ['name', 'city'] });
    expect(sup[0].text).not.toContain('SKU');
  });

  it('reads CSV rows, HTML main text (selectors honored), Markdown heading paths and source code', async () => {
    const csv = await ok('people.csv', 'text/csv', 'name,role\nAda,engineer\n"Grace, R.",admiral\n');
    expect(csv.chunks[0]).toMatchObject({ rowStart: 1, rowEnd: 2, columnNames: ['name', 'role'] });
    expect(csv.chunks[0].text).toBe('name: Ada; role: engineer\n\nname: Grace, R.; role: admiral');

    const html = '<html><head><title>Docs</title><script>var x = "tracking";</script></head><body><nav>Home | About</nav>' +
      '<main><h1>Install</h1><p>Run the installer.</p><div class="ad">Buy now!</div><pre>make\nmake install</pre></main><footer>© 2026</footer></body></html>';
    const page = await ok('index.html', 'text/html', html);
    expect(page.title).toBe('Docs');
    const text = page.chunks.map((c) => c.text).join('\n');
    expect(text).toContain('Run the installer.');
    expect(text).toContain('make\nmake install');
    for (const gone of ['tracking', 'Home | About', '© 2026']) expect(text).not.toContain(gone);
    expect(text).toContain('Buy now!');
    const picked = await ok('index.html', 'text/html', html, { selectors: { content: 'main', exclude: '.ad', title: 'h1' } });
    expect(picked.title).toBe('Install');
    expect(picked.chunks.map((c) => c.text).join('\n')).not.toContain('Buy now!');

    const md = await ok('guide.md', 'text/markdown', '# Guide\n\nIntro.\n\n## Setup\n\n### Linux\n\nUse apt.\n\n## Usage\n\nRun it.\n');
    expect(md.title).toBe('Guide');
    expect(md.chunks.find((c) => c.text.includes('Use apt.'))!.heading).toBe('Guide > Setup > Linux');
    expect(md.chunks.find((c) => c.text.includes('Run it.'))!.heading).toBe('Guide > Usage');

    const code = await ok('main.py', 'text/x-python', 'def main():\n    print("hi")\n\n\ndef other():\n    return 2\n');
    expect(code.format).toBe('code');
    expect(code.chunks[0].text).toContain('    print("hi")');
  });

  it('sizes chunks for the local model: at most 254 word pieces, aimed at 200, overlapping, and each a slice of the document', async () => {
    const text = `# Report\n\n${prose(120)}\n\n## Appendix\n\n${prose(40, 7)} ${'x'.repeat(3000)} tail.`;
    const r = await ok('report.md', 'text/markdown', text);
    const { doc } = await parseBytes(new TextEncoder().encode(text), 'report.md', 'text/markdown');
    const joined = doc.blocks.map((b) => b.text).join('\n\n');
    expect(r.chars).toBe(joined.length);
    expect(r.chunks.length).toBeGreaterThan(20);
    let overlapping = 0;
    r.chunks.forEach((c, i) => {
      expect(c.index).toBe(i);
      expect(c.text).toBe(joined.slice(c.charStart, c.charEnd));
      expect(c.tokens).toBe(tokens(c.text));
      expect(c.tokens).toBeLessThanOrEqual(LOCAL.maxTokens);
      if (i > 0 && c.charStart < r.chunks[i - 1].charEnd) overlapping++;
    });
    // Most chunks are near the target: the chunker does not cut small for no reason.
    const sizes = r.chunks.map((c) => c.tokens).sort((a, b) => a - b);
    expect(sizes[Math.floor(sizes.length / 2)]).toBeGreaterThan(LOCAL.targetTokens * 0.75);
    expect(overlapping).toBeGreaterThan(5);
    // A section break starts a new chunk.
    const appendix = r.chunks.find((c) => c.text.startsWith('Appendix'))!;
    expect(appendix.heading).toBe('Report > Appendix');
  });

  it('fails each kind of bad file alone with its type, and the pool goes on', async () => {
    const cases: [string, string, Uint8Array | string, string, { maxBytes?: number }?][] = [
      ['broken.pdf', 'application/pdf', '%PDF-1.7\n1 0 obj << /Type /Catalog', 'corrupt_file'],
      ['fake.pdf', 'application/pdf', 'just text, named a PDF', 'corrupt_file'],
      ['locked.pdf', 'application/pdf', encryptedPdf(), 'encrypted'],
      ['locked.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', oleContainer(), 'encrypted'],
      ['scan.pdf', 'application/pdf', await pdfWithoutText(), 'empty_document'],
      ['empty.txt', 'text/plain', '', 'empty_document'],
      ['blank.md', 'text/markdown', '\n   \n\t\n', 'empty_document'],
      ['photo.bin', 'application/octet-stream', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1, 2, 3]), 'unsupported_type'],
      ['old.doc', 'application/msword', 'whatever', 'unsupported_type'],
      ['bomb.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', zipBomb(), 'zip_bomb'],
      ['notword.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', zipOf([{ name: 'hello.txt', data: new TextEncoder().encode('hi') }]), 'corrupt_file'],
      ['big.txt', 'text/plain', 'a'.repeat(5000), 'file_too_large', { maxBytes: 1000 }],
    ];
    for (const [name, type, bytes, expected, extra] of cases) {
      const r = await parse(name, type, bytes, extra);
      expect(r.ok, name).toBe(false);
      if (!r.ok) {
        expect(r.type, `${name}: ${r.message}`).toBe(expected);
        expect(r.message.length).toBeGreaterThan(5);
      }
    }
    expect((await ok('fine.txt', 'text/plain', 'Still parsing.')).chunks[0].text).toBe('Still parsing.');
  });

  it('ends a parse that runs past its bound (timed_out) and parses the next file on a fresh thread', async () => {
    const r = await parse('huge.md', 'text/markdown', `# Big\n\n${prose(40_000, 3)}`, { timeoutMs: 300 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.type).toBe('timed_out');
    expect((await ok('after.txt', 'text/plain', 'Alive.')).chunks[0].text).toBe('Alive.');
  });
});
