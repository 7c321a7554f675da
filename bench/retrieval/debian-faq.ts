/**
 * The Debian FAQ (Debian package `debian-faq`, plain-text edition) as a question set with known
 * answers: every numbered section is a document (its body, heading removed), and every section
 * whose heading is a question is a query whose one right answer is that section.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

export const FAQ_TEXT = '/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz';

export interface FaqSection {
  /** "1.2" or "12.2.1" */
  number: string;
  heading: string;
  body: string;
}

/** Installs the package with apt-get when allowed (root, apt-get present); null when ready. */
export function ensureDebianFaq(install: boolean): string | null {
  if (existsSync(FAQ_TEXT)) return null;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!install || !root) return `the Debian FAQ is not installed (apt-get install -y debian-faq)`;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  process.stderr.write('[retrieval] installing debian-faq with apt-get (once; --no-install to skip)\n');
  spawnSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  const r = spawnSync('apt-get', ['install', '-y', 'debian-faq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  return r.status === 0 && existsSync(FAQ_TEXT) ? null : `apt-get install debian-faq failed (exit ${r.status})`;
}

// Headings start at column 0 with the number and a no-break space; their wrapped lines follow at
// column 0 too; bodies are indented. The table of contents (indented) and chapter titles are skipped.
const HEADING = /^(\d+(?:\.\d+)+)\.\u00a0(.*)$/;
const CHAPTER = /^Chapter\u00a0/;

export function readFaq(path = FAQ_TEXT): FaqSection[] {
  const lines = gunzipSync(readFileSync(path)).toString('utf8').split('\n');
  const sections: FaqSection[] = [];
  let current: { number: string; heading: string[]; body: string[]; inHeading: boolean } | null = null;
  const flush = () => {
    if (!current) return;
    const body = current.body.join('\n').replace(/\u00a0/g, ' ').replace(/[ \t]+/g, ' ').replace(/\n{3,}/g, '\n\n').trim();
    sections.push({ number: current.number, heading: current.heading.join(' ').replace(/\u00a0/g, ' ').trim(), body });
  };
  for (const line of lines) {
    const m = HEADING.exec(line);
    if (m) {
      flush();
      current = { number: m[1], heading: [m[2]], body: [], inHeading: true };
      continue;
    }
    if (CHAPTER.test(line)) {
      flush();
      current = null;
      continue;
    }
    if (!current) continue;
    if (current.inHeading && line !== '' && !/^\s/.test(line)) {
      current.heading.push(line);
      continue;
    }
    current.inHeading = false;
    current.body.push(line.trim());
  }
  flush();
  return sections.filter((s) => s.body.length > 0);
}
