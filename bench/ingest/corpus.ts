/**
 * The ingestion benchmark's corpus: the HTML, Markdown, text and PDF documentation of a few Debian
 * packages (downloaded with `apt-get download`, unpacked with `dpkg -x` into bench/.cache/ingest,
 * never installed), plus PDF, DOCX and XLSX files generated from that text with the writer
 * libraries (pdf-lib, docx, exceljs), so every parser is on the path.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import ExcelJS from 'exceljs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { paths } from '../ann/paths.js';
import { downloadDebs } from '../debian-debs.js';

export const PACKAGES = ['debian-faq', 'debian-reference-en', 'nodejs-doc'];

export interface CorpusFile {
  name: string;
  type: string;
  bytes: Uint8Array;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.md': 'text/markdown',
  '.txt': 'text/plain',
  '.pdf': 'application/pdf',
};

const dir = join(paths.cache, 'ingest');

/** Downloads and unpacks the packages once; null when ready, else what is wrong. */
export function fetchPackages(log: (m: string) => void): string | null {
  const root = join(dir, 'root');
  if (existsSync(join(dir, 'unpacked'))) return null;
  try {
    downloadDebs(join(dir, 'debs'), PACKAGES, log);
  } catch (e) {
    return (e as Error).message;
  }
  for (const deb of readdirSync(join(dir, 'debs')).filter((f) => f.endsWith('.deb'))) {
    const x = spawnSync('dpkg', ['-x', join(dir, 'debs', deb), root], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (x.status !== 0) return `dpkg -x ${deb} failed: ${String(x.stderr).trim()}`;
  }
  mkdirSync(join(dir, 'unpacked'));
  return null;
}

/** The packages' documents (gzipped ones unpacked), by path under the unpacked tree. */
export function debianDocuments(): CorpusFile[] {
  const root = join(dir, 'root');
  const out: CorpusFile[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      // Packages hold symlinks to files of packages not unpacked here.
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else {
        const gz = name.endsWith('.gz');
        const type = TYPES[extname(gz ? name.slice(0, -3) : name)];
        if (!type) continue;
        const raw = readFileSync(p);
        out.push({ name: relative(root, p).replace(/\.gz$/, ''), type, bytes: gz ? gunzipSync(raw) : raw });
      }
    }
  };
  walk(join(root, 'usr', 'share'));
  return out;
}

/** Paragraphs of plain text from the corpus's text files, for the generated documents. */
function paragraphsOf(files: CorpusFile[]): string[] {
  const text = files
    .filter((f) => f.type === 'text/plain' || f.type === 'text/markdown')
    .map((f) => new TextDecoder().decode(f.bytes))
    .join('\n\n');
  return text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').replace(/[^\x20-\x7e]/g, '').trim())
    .filter((p) => p.length > 80 && p.length < 1500 && /[a-z]{3}/.test(p));
}

/** PDF, DOCX and XLSX files of the corpus's own text: `count` of each kind. */
export async function generatedDocuments(files: CorpusFile[], count: number): Promise<CorpusFile[]> {
  const paras = paragraphsOf(files);
  let at = 0;
  const take = (n: number) => Array.from({ length: n }, () => paras[at++ % paras.length]);
  const out: CorpusFile[] = [];
  for (let i = 0; i < count; i++) {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    for (let page = 0; page < 6; page++) {
      const p = pdf.addPage([612, 792]);
      let y = 750;
      for (const para of take(4)) {
        for (const line of wrap(para, 95)) {
          if (y < 50) break;
          p.drawText(line, { x: 40, y, size: 10, font });
          y -= 13;
        }
        y -= 13;
      }
    }
    out.push({ name: `generated/report-${i}.pdf`, type: 'application/pdf', bytes: await pdf.save() });

    const children: Paragraph[] = [];
    for (let s = 0; s < 6; s++) {
      children.push(new Paragraph({ text: `Section ${s + 1}`, heading: HeadingLevel.HEADING_1 }));
      for (const para of take(4)) children.push(new Paragraph({ text: para }));
    }
    out.push({ name: `generated/memo-${i}.docx`, type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children }] }))) });

    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('Entries');
    sheet.addRow(['id', 'topic', 'summary']);
    for (let r = 0; r < 200; r++) {
      const para = take(1)[0];
      sheet.addRow([r + 1, para.split(' ').slice(0, 3).join(' '), para.slice(0, 240)]);
    }
    out.push({ name: `generated/sheet-${i}.xlsx`, type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', bytes: new Uint8Array(await book.xlsx.writeBuffer()) });
  }
  return out;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(' ')) {
    if (line && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines;
}
