// bench:qa's corpora: files to upload, the questions asked of them, where each answer is, and
// questions none of the files answers. The gold answers are read from the documents with cheerio,
// independently of Sable's own parser: a question is a heading that ends with "?", its gold passage
// is the section under that heading and its key sentence the first sentence of the section's
// first paragraph.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as cheerio from 'cheerio';
import { sentencesOf } from '../../answer/synthesis/sentences.js';
import { paths } from '../ann/paths.js';
import { downloadDebs, unpackedDeb } from '../debian-debs.js';
import { ensureDebianFaq, readFaq } from '../retrieval/debian-faq.js';

export interface QaFile {
  name: string;
  bytes: Buffer;
  contentType: string;
}

export interface QaQuestion {
  text: string;
  /** The document that answers it, and (when the document has several sections) the heading of the section. */
  gold: { file: string; heading?: string };
  /** The gold section's first sentence. */
  key: string;
  /** The gold section's text, whitespace collapsed (what an answer may quote). */
  section: string;
}

export interface QaCorpus {
  name: string;
  /** One line on what the corpus is and how it is uploaded. */
  describe: string;
  files: QaFile[];
  questions: QaQuestion[];
  /** Every heading of the corpus: an answer's first sentence must not be one. */
  headings: string[];
  /** Questions whose answer is in no file of the corpus (from another FAQ). */
  unanswerable: string[];
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Celery's FAQ headings (python-celery-doc): the questions the Debian FAQ cannot answer.
 */
const CELERY_QUESTIONS = [
  'What kinds of things should I use Celery for?',
  'Does Celery have many dependencies?',
  'Is Celery dependent on pickle?',
  'Is Celery for Django only?',
  'Do I have to use AMQP/RabbitMQ?',
  'MySQL is throwing deadlock errors, what can I do?',
  'Why is Task.delay/apply*/the worker just hanging?',
  "Why won't my periodic task run?",
  'How do I purge all waiting tasks?',
  'How do I get the result of a task if I have the ID that points there?',
  'Why is RabbitMQ crashing?',
  'Can I use Celery with ActiveMQ/STOMP?',
  'Can I call a task by name?',
  'Can I get the task id of the current task?',
  'Can I cancel the execution of a task?',
  'Can I disable prefetching of tasks?',
  'Does Celery support task priorities?',
  'Should I use retry or acks_late?',
  'Can I schedule tasks to execute at a specific time?',
  'Does Celery support Windows?',
];

/** Debian FAQ headings: the questions Celery's documentation cannot answer. */
const DEBIAN_QUESTIONS = [
  'What is Debian GNU/Linux?',
  'What is the difference between Debian GNU/Linux and other Linux distributions?',
  'Which Debian distribution (stable/testing/unstable) is better for me?',
  'What are all those directories at the Debian archives?',
  'What is a Virtual Package?',
  'How can I find out what package produced a particular file?',
  'How can I ensure that all programs use the same paper size?',
  'Where is VoIP software?',
  'How do I install the Debian system on my computer?',
  'What kernels does Debian GNU/Linux run?',
  'Can I use a kernel from the Linux Kernel Archives?',
  'Where can I get the Debian CD images?',
  'How can I keep my Debian system current?',
  'What is a Debian maintainer?',
  'How do I become a Debian software developer?',
  'Who is Software in the Public Interest?',
  'What is the Debian Free Software Guidelines?',
  'Does Debian support Unicode?',
  'How can I provide access to hardware peripherals, without compromising security?',
  'Which mailing lists discuss Debian?',
];

/** The Debian FAQ as bench:retrieval has it: each numbered section a text file, without its heading. */
export function debianSections(install: boolean): QaCorpus {
  const missing = ensureDebianFaq(install);
  if (missing) throw new Error(missing);
  const sections = readFaq();
  const fileOf = (i: number) => `faq-${sections[i].number}.txt`;
  const bodies = sections.map((s) => s.body.replace(/([^\n])\n(?!\n)/g, '$1 '));
  return {
    name: 'Debian FAQ, sections without headings',
    describe: `${sections.length} sections of debian-faq.en.txt, each uploaded as a text file without its heading (bench:retrieval's form)`,
    files: sections.map((_, i) => ({ name: fileOf(i), bytes: Buffer.from(bodies[i]), contentType: 'text/plain' })),
    questions: sections
      .map((s, i) => ({ text: s.heading, gold: { file: fileOf(i) }, key: sentencesOf(bodies[i])[0] ?? '', section: collapse(bodies[i]) }))
      .filter((q) => q.text.endsWith('?')),
    headings: sections.map((s) => s.heading),
    unanswerable: CELERY_QUESTIONS,
  };
}

/** Sections of a rendered page: headings, their text, the first sentence under them. */
function sectionsOf(html: string, file: string, heading: string, section: string): { questions: QaQuestion[]; headings: string[] } {
  const $ = cheerio.load(html);
  const questions: QaQuestion[] = [];
  const headings: string[] = [];
  $(heading).each((_, el) => {
    const h = $(el);
    const title = collapse(h.text().replace(/[¶§]/g, ''));
    if (title === '') return;
    headings.push(title);
    const question = title.replace(/^\d+(?:\.\d+)*\.\s*/, '');
    if (!question.endsWith('?')) return;
    const box = h.closest(section);
    const own = box.children().not(section).not('div.titlepage');
    const first = collapse(own.filter('p').first().text());
    const text = collapse(own.not(heading).text());
    if (first === '') return;
    questions.push({ text: question, gold: { file, heading: title }, key: sentencesOf(first)[0] ?? first, section: text });
  });
  return { questions, headings };
}

/** The Debian FAQ as Debian publishes it: its HTML chapters (and their contents page), uploaded as they are. */
export function debianHtml(install: boolean): QaCorpus {
  const missing = ensureDebianFaq(install);
  if (missing) throw new Error(missing);
  const dir = '/usr/share/doc/debian/FAQ';
  const names = readdirSync(dir).filter((f) => f.endsWith('.en.html')).sort();
  const files = names.map((name) => ({ name, bytes: readFileSync(join(dir, name)), contentType: 'text/html' }));
  const questions: QaQuestion[] = [];
  const headings: string[] = [];
  for (const f of files) {
    const s = sectionsOf(f.bytes.toString('utf8'), f.name, 'h1.title, h2.title, h3.title, h4.title', 'div.section, div.chapter');
    questions.push(...s.questions);
    headings.push(...s.headings);
  }
  return {
    name: 'Debian FAQ, HTML as published',
    describe: `the ${files.length} pages of ${dir}/*.en.html (chapters and the contents page), uploaded as they are`,
    files,
    questions,
    headings,
    unanswerable: CELERY_QUESTIONS,
  };
}

const CELERY_DOC = 'python-celery-doc';
/** The FAQ and the pages a reader of it would also have: getting started, the task guides, the licence. */
const CELERY_PAGES = [
  'faq.html',
  'copyright.html',
  'glossary.html',
  'getting-started/introduction.html',
  'getting-started/first-steps-with-celery.html',
  'getting-started/next-steps.html',
  'userguide/tasks.html',
  'userguide/calling.html',
  'userguide/periodic-tasks.html',
  'userguide/workers.html',
];

/** Celery's documentation (Debian's python-celery-doc, Sphinx): its FAQ among nine other pages. */
export function celeryHtml(): QaCorpus {
  const debs = join(paths.cache, 'html', 'debs');
  downloadDebs(debs, [CELERY_DOC], (m) => process.stderr.write(`[qa] ${m}\n`));
  const html = join(unpackedDeb(debs, join(paths.cache, 'html'), CELERY_DOC), 'usr/share/doc', CELERY_DOC, 'html');
  const files = CELERY_PAGES.map((p) => ({ name: relative(html, join(html, p)), bytes: readFileSync(join(html, p)), contentType: 'text/html' }));
  const s = sectionsOf(files[0].bytes.toString('utf8'), files[0].name, 'h1, h2, h3, h4', 'section');
  return {
    name: "Celery's FAQ, HTML as published",
    describe: `${CELERY_DOC}'s faq.html and ${files.length - 1} other pages (getting started, task guides, copyright), uploaded as they are`,
    files,
    questions: s.questions,
    headings: s.headings,
    unanswerable: DEBIAN_QUESTIONS,
  };
}
