// The extractive answer (no model) over a documentation site as users publish it: Sphinx-built
// HTML pages with their navigation, ¶ permalinks and a license page, ingested through a
// file_upload source. The answer is the section's own text, not its heading, not the license,
// and a question the site cannot answer gets "no answer" with the closest sources.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../dist/control-plane/app.js';
import { loadConfig } from '../../dist/control-plane/config.js';
import { openingHeadingsCut, pickSentences } from '../../dist/answer/synthesis/extractive.js';
import { SentenceSplitter, sentencesOf } from '../../dist/answer/synthesis/sentences.js';
import { ingestClient } from '../support/ingest.js';

/** A page as Sphinx's classic theme writes it: related bar, sidebar, sections with ¶ links, footer. */
function sphinxPage(title: string, sections: [string, string][]): string {
  const body = sections
    .map(([h, text], i) => `<section id="s${i}"><h2>${h}<a class="headerlink" href="#s${i}" title="Link to this heading">¶</a></h2>${text}</section>`)
    .join('\n');
  return `<!DOCTYPE html><html><head><title>${title} — Tool 3.12 documentation</title></head><body>
  <div class="related" role="navigation" aria-label="Related"><h3>Navigation</h3><ul><li><a href="genindex.html">index</a></li><li><a href="license.html">next</a> |</li><li><a href="index.html">Tool 3.12 documentation</a> »</li></ul></div>
  <div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
  <section id="top"><h1>${title}<a class="headerlink" href="#top" title="Link to this heading">¶</a></h1>
  ${body}</section></div></div></div>
  <div class="sphinxsidebar" role="navigation" aria-label="Main"><div class="sphinxsidebarwrapper"><h3>Table of Contents</h3><ul><li><a href="#s0">How do I copy a file?</a></li></ul><h4>Previous topic</h4><p class="topless"><a href="index.html">Programming FAQ</a></p></div></div></div>
  <div class="footer">© Copyright 2001-2024, Tool Software Foundation. Created using Sphinx 7.2.6.</div></body></html>`;
}

const FAQ = sphinxPage('Library and Extension FAQ', [
  ['How do I copy a file?', '<p>To copy a file, call <code>shutil.copyfile()</code> with the source and the destination path. It copies the contents only; <code>shutil.copy2()</code> also keeps the timestamps.</p>'],
  ['Is there an equivalent of C’s “?:” ternary operator?', '<p>Yes, there is. The syntax is as follows:</p><pre>[on_true] if [expression] else [on_false]\nx, y = 50, 25\nsmall = x if x &lt; y else y</pre><p>Before this syntax was introduced, people often wrote it with and and or.</p>'],
  ['How do I delete a file?', '<p>Use <code>os.remove(filename)</code> or <code>os.unlink(filename)</code>; to remove a directory, use <code>os.rmdir()</code>.</p>'],
  ['How do I generate random numbers?', '<p>The standard module random implements a random number generator. Using it is simple: <code>random.random()</code> returns a float in the range [0, 1).</p>'],
]);
const LICENSE = sphinxPage('History and License', [
  ['Terms and conditions', '<p>Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated documentation files, to deal in the Software without restriction, including without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software.</p><p>THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.</p>'],
]);
/** A DocBook-style page (the Debian FAQ's): numbered headings, some of several sentences. */
const HARDWARE = sphinxPage('Hardware', [
  ['5.14. I have a wireless network card which doesn\'t work with Tool. What should I do?', '<p>Buy one which does. Most cards of the last ten years have free drivers.</p>'],
]);
const INSTALL = sphinxPage('Installing Tool', [
  ['Installing on Linux', '<p>Most Linux distributions ship Tool; install it with the package manager, for example apt install tool.</p>'],
  ['Files the installer writes', '<p>The installer copies the library files to /usr/lib/tool and writes a configuration file.</p>'],
]);

describe('the extractive answer over a documentation site', () => {
  let dir: string;
  let svc: Service;
  let dataset: string;
  const ask = async (query: string) => {
    const res = await fetch(svc.url + '/intelligence/query', {
      method: 'POST',
      headers: { 'x-api-key': svc.createdAdminKey!, 'content-type': 'application/json' },
      body: JSON.stringify({ query, dataset_ids: [dataset], stream: false }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { answer: string; message: string | null; sources: { name: string }[] };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sable-extractive-'));
    svc = await startService(loadConfig({ port: '0', 'data-dir': dir, 'answer-max-sentences': '2' }, {}));
    const api = ingestClient(() => svc.url, () => svc.createdAdminKey!);
    dataset = await api.dataset('tool-docs');
    const source = await api.source('site');
    const job = await api.upload(source, dataset, [
      { name: 'library.html', type: 'text/html', bytes: FAQ },
      { name: 'license.html', type: 'text/html', bytes: LICENSE },
      { name: 'install.html', type: 'text/html', bytes: INSTALL },
      { name: 'hardware.html', type: 'text/html', bytes: HARDWARE },
    ]);
    expect(job.status).toBe('completed');
  }, 120_000);
  afterAll(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers with the section, not its heading, not the license, within SABLE_ANSWER_MAX_SENTENCES', async () => {
    const r = await ask('How do I copy a file?');
    expect(r.answer).toBe('To copy a file, call shutil.copyfile() with the source and the destination path. [1] It copies the contents only; shutil.copy2() also keeps the timestamps. [1]');
    expect(r.sources[0].name).toBe('library.html');
    expect(r.answer).not.toMatch(/How do I copy a file|¶|Permission is hereby granted|Copyright|Navigation/);
  });

  it('a section whose answer holds none of the question\'s words still answers from its start', async () => {
    const r = await ask('Is there an equivalent of C\'s "?:" ternary operator?');
    // Two sentences (SABLE_ANSWER_MAX_SENTENCES), though the section goes on.
    expect(r.answer).toBe('Yes, there is. [1] The syntax is as follows: [1]');
  });

  it('a numbered heading of several sentences leaves no piece of itself in the answer', async () => {
    const r = await ask("I have a wireless network card which doesn't work with Tool. What should I do?");
    expect(r.answer).toBe('Buy one which does. [1] Most cards of the last ten years have free drivers. [1]');
  });

  it('a question the site cannot answer: no answer, the closest sources shown', async () => {
    const r = await ask('What is the capital city of Australia?');
    expect(r.answer).toBe('I found nothing in the datasets in scope that answers this question.');
    expect(r.message).toBe('No passage of the datasets in scope matches the question.');
    expect(r.sources.length).toBeGreaterThan(0);
  });
});

describe('pickSentences', () => {
  const chunk = (text: string, over: object = {}) => ({ text, headings: [], relevance: 0.8, startsSection: false, rank: 0, ...over });

  it('never answers with a heading, a restatement, a license or a copyright line', () => {
    const picked = pickSentences('How do I copy a file?', [
      { chunks: [chunk('How do I copy a file?\n\nHow do I copy a file? Copyright 2024 Ann. Use shutil.copyfile to copy a file.', { headings: ['FAQ', 'How do I copy a file?'] })] },
      { chunks: [chunk('Permission is hereby granted, free of charge, to copy a file of this software.', { rank: 1 })] },
    ]);
    expect(picked.map((p) => p.text)).toEqual(['Use shutil.copyfile to copy a file.']);
  });

  it('cuts the headings a chunk opens with, whole, before its sentences', () => {
    const headings = ['Chapter 3. Choosing', '3.1.5. I installed it. Now I have a problem. What should I do?'];
    const cut = openingHeadingsCut(`${headings[0]}\n\n${headings[1]}\n\nAsk the people who made it. They know.`, headings);
    expect(cut).toEqual({ text: 'Ask the people who made it. They know.', opensSection: true });
    expect(openingHeadingsCut('Ask the people. 3.1.5. I installed it.', headings)).toEqual({ text: 'Ask the people. 3.1.5. I installed it.', opensSection: false });
    const picked = pickSentences('I installed it. Now I have a problem. What should I do?', [{ chunks: [chunk(cut.text, { headings, startsSection: true })] }]);
    expect(picked.map((p) => p.text)).toEqual(['Ask the people who made it.', 'They know.']);
  });

  it('keeps to a contiguous passage of the answering chunk, within its bounds', () => {
    const text = 'Files are copied with copyfile. It copies the contents. It keeps no metadata. It raises if the target is a folder. It is fast.';
    const picked = pickSentences('How are files copied?', [{ chunks: [chunk(text, { startsSection: true })] }, { chunks: [chunk('Files can be copied by hand too.', { rank: 1 })] }]);
    expect(picked.map((p) => [p.text, p.source])).toEqual([['Files are copied with copyfile.', 1], ['It copies the contents.', 1], ['It keeps no metadata.', 1]]);
  });

  it('prefers a chunk lower down whose heading asks the question', () => {
    const picked = pickSentences('How do I delete a file?', [
      { chunks: [chunk('Files are opened with open().', { headings: ['Reading files'] })] },
      { chunks: [chunk('Use os.remove.', { headings: ['How do I delete a file?'], startsSection: true, rank: 1 })] },
    ]);
    expect(picked).toEqual([{ text: 'Use os.remove.', source: 2, score: expect.any(Number) }]);
  });

  it('no answer when the nearest chunk is far from the question and holds little of it', () => {
    const sources = [{ chunks: [chunk('The capital letters of a name are kept.', { relevance: 0.2 })] }];
    expect(pickSentences('What is the capital city of Australia?', sources)).toEqual([]);
  });
});

describe('sentences', () => {
  it("a name's initials and abbreviations do not end a sentence, in a chunk or a model's stream", () => {
    const text = 'The first edition was made by J.H.M. Dassen (Ray) and Chuck Stickelman. Authors are Susan G. Kleinmann, e.g. in 2024. It is free.';
    const want = ['The first edition was made by J.H.M. Dassen (Ray) and Chuck Stickelman.', 'Authors are Susan G. Kleinmann, e.g. in 2024.', 'It is free.'];
    expect(sentencesOf(text)).toEqual(want);
    const stream = new SentenceSplitter();
    const out = [...text.match(/.{1,7}/gs)!.flatMap((delta) => stream.push(delta)), stream.end()].map((x) => x.trim());
    expect(out).toEqual(want);
  });
});
