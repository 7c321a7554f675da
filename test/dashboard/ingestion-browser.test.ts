// The dashboard's Ingestion pages in a real browser (issue 31, phase 2a): headless Chromium against
// a service started in this process (test/dashboard/support.ts). It signs in, creates a text
// dataset on the page, creates a file_upload source through the form generated from its type's
// schema (validated first) and an S3 source whose secrets come back masked, drops two files the
// test wrote (a .txt and a .md whose type the browser leaves empty) on the upload zone with a
// progress bar each, watches the job finish on the jobs page, opens it (files, statistics),
// downloads a document of the catalog (its bytes as uploaded), creates a schedule whose next run
// is shown in its own zone, and deletes a schedule and a source after confirming. The upload's
// PUTs stay on the page's origin (the local store signs URLs on a second port, which the page's
// CSP refuses), every input has a label, the file picker is reached and opened by keyboard, and
// no key or secret reaches the page, a URL or the console. Screenshots go to
// bench/.cache/dashboard-shots/ (docs/dashboard/ holds copies of the main ones).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { dashboardHarness, expectNothingLeaked } from './support.js';

/** Inputs, selects and text areas on the page that no label names. */
const unlabelled = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea')]
      .filter((el) => !((el as HTMLInputElement).labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')))
      .map((el) => el.outerHTML.slice(0, 120)),
  );

const S3_KEY_ID = 'AKIATESTKEYID0000001';
const S3_SECRET = 'wJalrXUtnFEMI-test-secret-never-shown';

describe('the Ingestion pages in Chromium', () => {
  const h = dashboardHarness('sable-dashboard-ingest-');

  it('creates sources, uploads two files with progress, watches the job, downloads a document, schedules', async () => {
    const started = Date.now();
    const files = mkdtempSync(join(tmpdir(), 'sable-dashboard-files-'));
    const txt = join(files, 'leave-policy.txt');
    const md = join(files, 'onboarding.md');
    writeFileSync(txt, 'Leave policy. Every employee gets 27 days of paid leave a year; unused days carry over until March.\n');
    writeFileSync(md, '# Onboarding\n\nNew starters meet their buddy on the first Monday and get a laptop from the IT desk on floor 3.\n');
    const page = await h.newPage();
    try {
      await h.signIn(page, h.adminKey);

      // A text dataset, created on the page (the local model embeds the documents' text).
      await page.getByRole('button', { name: 'New dataset' }).click();
      await page.getByLabel('Name', { exact: true }).fill('handbook');
      await page.getByRole('button', { name: 'Create dataset' }).click();
      await page.getByRole('status').getByText('Created handbook.').waitFor();
      const handbook = (await h.api('GET', '/datasets')).body.datasets.find((d: { name: string }) => d.name === 'handbook');

      // One nav entry leads to the Ingestion pages; a file_upload source through the generated form.
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Ingestion' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor();
      expect(await nav.getByRole('link', { name: 'Ingestion' }).getAttribute('aria-current')).toBe('page');
      await page.getByRole('button', { name: 'New source' }).click();
      await page.getByLabel('Source type').selectOption('file_upload');
      await page.getByRole('group', { name: 'File upload settings' }).waitFor();
      // The schema's fields, with their defaults offered: storage_provider (s3, local) and sync_mode.
      expect(await page.getByLabel('storage_provider').locator('option').allTextContents()).toEqual(['default (s3)', 's3', 'local']);
      await page.getByLabel('sync_mode').selectOption('incremental');
      await page.getByLabel('Name', { exact: true }).fill('handbook uploads');
      await page.getByRole('button', { name: 'Validate' }).click();
      const valid = page.getByRole('status').filter({ hasText: 'Valid' });
      await valid.getByText('the config is valid').waitFor();
      expect(await unlabelled(page)).toEqual([]);
      await page.getByRole('button', { name: 'Create source' }).click();
      await page.getByRole('status').getByText('Created handbook uploads.').waitFor();
      const uploads = page.getByRole('region', { name: 'File upload sources' });
      expect(await uploads.getByRole('row', { name: /^handbook uploads / }).textContent()).toContain('sync_modeincremental');

      // An S3 source: its secrets are typed into password fields and come back as ********.
      await page.getByRole('button', { name: 'New source' }).click();
      await page.getByLabel('Source type').selectOption('s3');
      await page.getByLabel('bucket (required)').fill('archive');
      expect(await page.getByLabel('secret_access_key (required)').getAttribute('type')).toBe('password');
      await page.getByLabel('access_key_id (required)').fill(S3_KEY_ID);
      await page.getByLabel('secret_access_key (required)').fill(S3_SECRET);
      await page.getByLabel('max_file_size_mb').fill('50');
      await page.getByLabel('Name', { exact: true }).fill('archive bucket');
      expect(await unlabelled(page)).toEqual([]);
      await h.shot(page, 'ingestion-source-form');
      await page.getByRole('button', { name: 'Create source' }).click();
      await page.getByRole('status').getByText('Created archive bucket.').waitFor();
      const s3 = page.getByRole('region', { name: 'Amazon S3 (or S3-compatible) sources' }).getByRole('row', { name: /^archive bucket / });
      for (const shown of ['bucketarchive', 'access_key_id********', 'secret_access_key********', 'max_file_size_mb50']) expect(await s3.textContent()).toContain(shown);
      expect(await page.content()).not.toContain(S3_SECRET);
      expect(await page.content()).not.toContain(S3_KEY_ID);
      await h.shot(page, 'ingestion-sources');

      // Upload: from the source's row, the dataset chosen, the picker reached and opened by keyboard.
      // (Listening before the key is pressed: Playwright intercepts file choosers only once it listens.)
      const chooser = page.waitForEvent('filechooser');
      await uploads.getByRole('link', { name: 'Upload files to handbook uploads' }).click();
      await page.getByRole('heading', { level: 1, name: 'Upload' }).waitFor();
      await page.getByLabel('Into dataset').selectOption(handbook.id);
      const choose = page.getByRole('button', { name: 'Choose files…' });
      await page.locator('.drop button:not([disabled])').waitFor();
      await page.getByLabel('Into dataset').focus();
      await page.keyboard.press('Tab');
      expect(await choose.evaluate((b) => b === document.activeElement)).toBe(true);
      await page.keyboard.press('Enter');
      expect((await chooser).isMultiple()).toBe(true);
      expect(await unlabelled(page)).toEqual([]);

      // Two files dropped on the zone (a DataTransfer built in the page from the files' bytes).
      const dropped = [
        { name: 'leave-policy.txt', type: 'text/plain', text: readFileSync(txt, 'utf8') },
        { name: 'onboarding.md', type: '', text: readFileSync(md, 'utf8') },
      ];
      const transfer = await page.evaluateHandle((list) => {
        const dt = new DataTransfer();
        for (const f of list) dt.items.add(new File([f.text], f.name, { type: f.type }));
        return dt;
      }, dropped);
      const zone = page.getByRole('group', { name: 'Drop files here' });
      await zone.dispatchEvent('dragenter', { dataTransfer: transfer });
      await zone.dispatchEvent('dragover', { dataTransfer: transfer });
      await page.locator('.drop.over').waitFor();
      await zone.dispatchEvent('drop', { dataTransfer: transfer });
      const batch = page.getByRole('region', { name: 'Upload of 2 files' });
      await batch.getByText('Uploaded.').waitFor();
      for (const f of dropped) {
        const bar = batch.getByRole('progressbar', { name: `Upload of ${f.name}` });
        expect(await bar.evaluate((p) => [(p as HTMLProgressElement).value, (p as HTMLProgressElement).max])).toEqual([Buffer.byteLength(f.text), Buffer.byteLength(f.text)]);
      }
      expect(await batch.textContent()).toMatch(/leave-policy\.txt100 % of \d+ Buploaded/);
      await h.shot(page, 'ingestion-upload');
      // The PUTs went to the page's own origin, not to the upload listener's port (uWebSockets.js
      // serves the API, a node:http listener on another port the signed URLs).
      if (h.svc.adapter !== 'node:http') expect(new URL(h.svc.uploadUrl).port).not.toBe(new URL(h.svc.url).port);
      const puts = h.requests.filter((u) => u.includes('/uploads/'));
      expect(puts.length).toBe(2);
      expect(puts.every((u) => u.startsWith(h.svc.url + '/uploads/'))).toBe(true);
      const jobLink = batch.getByRole('link', { name: /^Job [0-9a-f]{8}$/ });
      const jobId = (await jobLink.getAttribute('href'))!.split('/').pop()!;

      // The jobs page reads the list again every 2 s until the job has completed.
      await page.getByRole('navigation', { name: 'Ingestion' }).getByRole('link', { name: 'Jobs' }).click();
      await page.getByRole('heading', { level: 1, name: 'Jobs' }).waitFor();
      const jobRow = page.getByRole('row', { name: new RegExp(`^Job ${jobId.slice(0, 8)}, `) });
      await jobRow.getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
      expect(await jobRow.textContent()).toMatch(/100 %.*handbook uploads.*handbook2/);
      expect(await unlabelled(page)).toEqual([]);
      await h.shot(page, 'ingestion-jobs');

      // The job: status, statistics, each file with its type, chunks and vectors.
      await jobRow.getByRole('link', { name: new RegExp(`^Job ${jobId.slice(0, 8)}`) }).click();
      await page.getByRole('heading', { level: 1, name: `Job ${jobId.slice(0, 8)}` }).waitFor();
      const fileRows = page.getByRole('region', { name: 'Job files' }).getByRole('row');
      await fileRows.filter({ hasText: 'onboarding.md' }).waitFor();
      expect(await fileRows.filter({ hasText: 'onboarding.md' }).textContent()).toMatch(/onboarding\.mdcompleted.*text\/markdown/);
      expect(await fileRows.filter({ hasText: 'leave-policy.txt' }).textContent()).toMatch(/leave-policy\.txtcompleted.*text\/plain/);
      expect(await page.getByRole('region', { name: 'Statistics' }).textContent()).toMatch(/Files discovered2Processed2Skipped0Failed0/);
      expect(await page.getByRole('button', { name: 'Retry job' }).count()).toBe(0);
      expect(await unlabelled(page)).toEqual([]);
      await h.shot(page, 'ingestion-job');

      // The catalog: both documents; the Markdown one downloaded with the key in a header, its bytes as written.
      await page.getByRole('link', { name: 'documents', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Documents' }).waitFor();
      const docs = page.getByRole('region', { name: 'Documents' });
      await docs.getByRole('row', { name: /^onboarding\.md / }).waitFor();
      expect(await docs.getByRole('row', { name: /^leave-policy\.txt / }).textContent()).toContain('ready');
      const [download] = await Promise.all([page.waitForEvent('download'), docs.getByRole('button', { name: 'Download onboarding.md' }).click()]);
      expect(download.suggestedFilename()).toBe('onboarding.md');
      expect(readFileSync((await download.path())!).equals(readFileSync(md))).toBe(true);
      await page.getByRole('status').getByText(/^Downloaded onboarding\.md/).waitFor();
      expect(h.requests.filter((u) => u.includes('/download')).every((u) => !u.includes(h.adminKey) && !u.includes('key='))).toBe(true);
      expect(await unlabelled(page)).toEqual([]);
      await h.shot(page, 'ingestion-documents');

      // A schedule: its next run shown in its own zone (as Intl words it there).
      await page.getByRole('navigation', { name: 'Ingestion' }).getByRole('link', { name: 'Schedules' }).click();
      await page.getByRole('button', { name: 'New schedule' }).click();
      await page.getByLabel('Source', { exact: true }).selectOption({ label: 'handbook uploads (file_upload)' });
      await page.getByLabel('Into dataset', { exact: true }).selectOption(handbook.id);
      await page.getByLabel('Cron').fill('0 2 * * *');
      await page.getByLabel('Time zone').fill('Asia/Tokyo');
      await page.getByLabel('Name', { exact: true }).fill('nightly handbook');
      expect(await unlabelled(page)).toEqual([]);
      await page.getByRole('button', { name: 'Create schedule' }).click();
      await page.getByRole('status').getByText('Created nightly handbook.').waitFor();
      const schedule = (await h.api('GET', '/ingestion/schedules')).body.schedules[0];
      const inTokyo = new Intl.DateTimeFormat('en', { timeZone: 'Asia/Tokyo', year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' }).format(new Date(schedule.next_run_at));
      expect(inTokyo).toMatch(/2:00\s?AM GMT\+9$/);
      const scheduleRow = page.getByRole('row', { name: /^nightly handbook / });
      expect(await scheduleRow.textContent()).toContain(inTokyo);
      expect(await scheduleRow.textContent()).toContain('0 2 * * *Asia/Tokyo');
      await h.shot(page, 'ingestion-schedules');
      await scheduleRow.getByRole('button', { name: 'Delete nightly handbook' }).click();
      await page.getByRole('dialog', { name: 'Delete nightly handbook?' }).getByRole('button', { name: 'Delete schedule' }).click();
      await page.getByRole('status').getByText('Deleted nightly handbook.').waitFor();
      expect((await h.api('GET', '/ingestion/schedules')).body.total).toBe(0);

      // A source's page: its config and what uses it; Run reads it again into a dataset (a job).
      await page.getByRole('navigation', { name: 'Ingestion' }).getByRole('link', { name: 'Sources' }).click();
      await page.getByRole('link', { name: 'handbook uploads', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'handbook uploads' }).waitFor();
      expect(await page.getByRole('region', { name: 'Config' }).textContent()).toContain('storage_provider');
      expect(await page.getByRole('region', { name: 'Used by' }).textContent()).toContain('0 enabled schedules, 0 jobs in flight');
      await page.getByLabel('Dataset', { exact: true }).selectOption(handbook.id);
      expect(await unlabelled(page)).toEqual([]);
      await page.getByRole('button', { name: 'Run source' }).click();
      await page.getByRole('heading', { level: 1, name: /^Job [0-9a-f]{8}$/ }).waitFor();
      expect(page.url()).not.toContain(jobId);
      await page.locator('.job-now').getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });

      // Delete a source after confirming (Cancel first keeps it).
      await page.getByRole('navigation', { name: 'Ingestion' }).getByRole('link', { name: 'Sources' }).click();
      await page.getByRole('button', { name: 'Delete archive bucket' }).click();
      await page.getByRole('dialog', { name: 'Delete archive bucket?' }).getByRole('button', { name: 'Cancel' }).click();
      expect(await page.getByRole('dialog').count()).toBe(0);
      await page.getByRole('button', { name: 'Delete archive bucket' }).click();
      await page.getByRole('button', { name: 'Delete source' }).click();
      await page.getByRole('status').getByText('Deleted archive bucket.').waitFor();
      expect((await h.api('GET', '/ingestion/sources')).body.sources.map((s: { name: string }) => s.name)).toEqual(['handbook uploads']);

      expect(await page.getByRole('alert').count()).toBe(0);
      const html = await page.content();
      for (const secret of [h.adminKey, S3_SECRET, S3_KEY_ID, h.tokens.at(-1)!]) expect(html).not.toContain(secret);
      expect(h.requests.filter((u) => u.includes(S3_SECRET) || u.includes(h.adminKey))).toEqual([]);
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      await page.context().close();
      rmSync(files, { recursive: true, force: true });
    }
  }, 90_000);

  it('at 390 px wide the upload and jobs pages fit the screen', async () => {
    const page = await h.newPage(390, 844);
    try {
      await h.signIn(page, h.adminKey);
      for (const path of ['ingestion/upload', 'ingestion/jobs', 'ingestion']) {
        await page.goto(`${h.svc.url}/dashboard/#/${path}`);
        await page.getByRole('navigation', { name: 'Ingestion' }).waitFor();
        await page.locator('.table-wrap, .drop').first().waitFor();
        // Nothing wider than the screen but the tables' own scrolling regions.
        expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(390);
      }
      await h.shot(page, 'mobile-ingestion-sources');
    } finally {
      await page.context().close();
    }
  });

  it('loaded nothing from another origin and put no key, token or secret in the console', () => {
    expectNothingLeaked(h, [S3_SECRET, S3_KEY_ID]);
    // No refusal of the service reached the console (a failed request logs its status there).
    expect(h.consoleLines.filter((l) => /status of [45]\d\d/.test(l))).toEqual([]);
  });
});
