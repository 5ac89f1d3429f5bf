// The page while `opscope explore` is still loading: tools/run_browser_tests.sh serves a named
// pipe (OPSCOPE_STREAM_FIFO, at OPSCOPE_STREAM_URL) and a corrupt trace, so the import waits for
// this test to write the trace (OPSCOPE_STREAM_TRACE) into the pipe. Until then the page shows the
// server's progress, and the API answers 503 (Retry-After, "loading") for the trace; once written,
// the trace appears without a reload, and the corrupt one's error names its file and byte offset.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {browserContext, drawn, ready, shot, watchErrors} from './harness.mjs';

const URL_ = process.env.OPSCOPE_STREAM_URL;
const FIFO = process.env.OPSCOPE_STREAM_FIFO;
const TRACE = process.env.OPSCOPE_STREAM_TRACE;
if (!URL_ || !FIFO || !TRACE) {
  throw new Error('OPSCOPE_STREAM_URL / _FIFO / _TRACE are not set (run tools/run_browser_tests.sh)');
}

test('while the server imports, the page shows its progress; the trace then opens without a reload', async () => {
  const early = await fetch(new URL('/api/trace/0/lanes', URL_));
  assert.equal(early.status, 503, 'a trace still loading answers 503');
  assert.equal(early.headers.get('retry-after'), '1');
  const body = await early.json();
  assert.equal(body.loading, true);
  assert.ok(['queued', 'importing'].includes(body.phase), body.phase);

  const page = watchErrors(await browserContext().newPage());
  await page.setViewportSize({width: 1500, height: 950});
  await page.goto(new URL('/#tab=details', URL_).toString());
  await page.waitForSelector('#loading .loading-trace[data-phase="importing"]', {timeout: 10000});
  assert.equal(await page.evaluate(() => document.body.dataset.loading), '1');
  assert.match(await page.textContent('#loading .loading-trace[data-phase="importing"] .loading-text'), /^importing /);
  await shot(page, 'loading-importing');
  const navigations = [];
  page.on('framenavigated', (f) => navigations.push(f.url()));

  // The trace arrives: written whole into the pipe, the reader sees its end.
  await new Promise((resolve, reject) => {
    const out = fs.createWriteStream(FIFO);
    out.on('error', reject);
    out.on('finish', resolve);
    out.end(fs.readFileSync(TRACE));
  });
  await ready(page);
  await drawn(page);
  assert.deepEqual(navigations, [], 'the page did not reload');
  assert.equal(await page.evaluate(() => document.body.dataset.loading), undefined);
  const status = await (await fetch(new URL('/api/status', URL_))).json();
  assert.equal(status.ready, true);
  assert.equal(status.traces[0].phase, 'ready');
  assert.ok(status.traces[0].bytes_read > 0 && status.traces[0].mb_per_s > 0, JSON.stringify(status.traces[0]));

  // The corrupt trace: its row stays, saying why (file and byte offset), and the API says 422.
  const failed = await page.textContent('#loading .loading-trace[data-phase="failed"] .loading-text');
  assert.match(failed, /could not be opened: corrupt\.json: byte \d+/);
  const res = await fetch(new URL('/api/trace/1/viewport', URL_));
  assert.equal(res.status, 422);
  const err = await res.json();
  assert.equal(err.failed, true);
  assert.equal(err.file, 'corrupt.json');
  assert.ok(err.offset > 0, JSON.stringify(err));
  assert.equal(await page.$eval('#trace-select option[value="1"]', (o) => o.disabled), true);
  await shot(page, 'loading-done');
  assert.deepEqual(page.errors, []);
  await page.close();
});
