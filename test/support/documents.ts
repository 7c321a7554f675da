// Documents for the parser and ingestion tests, built by writer libraries (pdf-lib, docx,
// exceljs) or by hand where no library writes the broken kind (an encrypted PDF, a zip bomb).
import { crc32, deflateRawSync } from 'node:zlib';
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import ExcelJS from 'exceljs';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** A PDF with one page per entry; each page's lines are drawn top-down, a blank line between paragraphs. */
export async function pdfOf(pages: string[][], title?: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  if (title) doc.setTitle(title);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = doc.addPage([612, 792]);
    let y = 740;
    for (const line of lines) {
      if (line !== '') page.drawText(line, { x: 50, y, size: 11, font });
      y -= 14;
    }
  }
  return doc.save();
}

/** A PDF whose only page has a drawing and no text (as a scan has). */
export async function pdfWithoutText(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]).drawRectangle({ x: 20, y: 20, width: 100, height: 50 });
  return doc.save();
}

/**
 * A PDF under the standard security handler (RC4, revision 2) whose user password is not
 * empty: a reader without the password cannot open it. Written by hand: the writer libraries
 * here do not encrypt.
 */
export function encryptedPdf(): Uint8Array {
  const hex = (seed: number) => Array.from({ length: 32 }, (_, i) => ((i * 37 + seed) & 0xff).toString(16).padStart(2, '0')).join('');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
    `<< /Filter /Standard /V 1 /R 2 /O <${hex(7)}> /U <${hex(91)}> /P -44 >>`,
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 4 0 R /ID [<00112233445566778899aabbccddeeff><00112233445566778899aabbccddeeff>] >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

export interface DocxPart {
  heading?: string;
  level?: 1 | 2;
  paragraphs: string[];
}

export async function docxOf(parts: DocxPart[]): Promise<Uint8Array> {
  const children: Paragraph[] = [];
  for (const p of parts) {
    if (p.heading) children.push(new Paragraph({ text: p.heading, heading: p.level === 2 ? HeadingLevel.HEADING_2 : HeadingLevel.HEADING_1 }));
    for (const t of p.paragraphs) children.push(new Paragraph({ text: t }));
  }
  return new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children }] })));
}

/** An XLSX with one sheet per entry: a header row, then the rows. */
export async function xlsxOf(sheets: { name: string; header: string[]; rows: (string | number)[][] }[]): Promise<Uint8Array> {
  const book = new ExcelJS.Workbook();
  for (const s of sheets) {
    const ws = book.addWorksheet(s.name);
    ws.addRow(s.header);
    for (const r of s.rows) ws.addRow(r);
  }
  return new Uint8Array(await book.xlsx.writeBuffer());
}

/** A zip archive (deflated entries), written by hand so a test can make one no tool would. */
export function zipOf(entries: { name: string; data: Uint8Array }[]): Uint8Array {
  return rawZip(entries.map((e) => ({ name: e.name, packed: deflateRawSync(e.data), crc: crc32(e.data), declared: e.data.length })));
}

export interface RawEntry {
  name: string;
  packed: Buffer;
  crc: number;
  /** What the directory says the entry inflates to. */
  declared: number;
  /** Entries with the same `shared` key point at the first one's bytes (overlapping entries). */
  shared?: string;
}

/** A zip written entry by entry, with the sizes and offsets a hostile archive declares. */
export function rawZip(entries: RawEntry[]): Uint8Array {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  const placed = new Map<string, number>();
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    let at = e.shared ? placed.get(e.shared) : undefined;
    if (at === undefined) {
      at = offset;
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(8, 8);
      local.writeUInt32LE(e.crc >>> 0, 14);
      local.writeUInt32LE(e.packed.length, 18);
      local.writeUInt32LE(e.declared >>> 0, 22);
      local.writeUInt16LE(name.length, 26);
      parts.push(local, name, e.packed);
      offset += 30 + name.length + e.packed.length;
      if (e.shared) placed.set(e.shared, at);
    }
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(8, 10);
    c.writeUInt32LE(e.crc >>> 0, 16);
    c.writeUInt32LE(e.packed.length, 20);
    c.writeUInt32LE(e.declared >>> 0, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(at, 42);
    central.push(c, name);
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...parts, dir, end]));
}

/** A .docx-shaped zip whose document part inflates from kilobytes to 64 MiB of zeros. */
export function zipBomb(): Uint8Array {
  return zipOf([
    { name: '[Content_Types].xml', data: new TextEncoder().encode('<Types/>') },
    { name: 'word/document.xml', data: new Uint8Array(64 * 1024 * 1024) },
  ]);
}

/**
 * The shape of a password-protected Office file: Word and Excel store those as OLE compound
 * files (the header signature D0 CF 11 E0 A1 B1 1A E1), not zips.
 */
export function oleContainer(): Uint8Array {
  const b = new Uint8Array(1536);
  b.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], 0);
  return b;
}

/** Prose of `paragraphs` paragraphs, each of a few sentences; deterministic. */
export function prose(paragraphs: number, seed = 1): string {
  const words = ['river', 'stone', 'lantern', 'harbor', 'meadow', 'engine', 'signal', 'copper', 'winter', 'orchard', 'thunder', 'pillow', 'garden', 'mirror', 'canyon', 'violet'];
  let x = seed;
  const next = () => ((x = (x * 1103515245 + 12345) & 0x7fffffff), x);
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const sentences: string[] = [];
    for (let s = 0; s < 3 + (next() % 4); s++) {
      const n = 6 + (next() % 12);
      const w = Array.from({ length: n }, () => words[next() % words.length]);
      sentences.push(w[0][0].toUpperCase() + w.join(' ').slice(1) + '.');
    }
    out.push(sentences.join(' '));
  }
  return out.join('\n\n');
}
