// Exact time at every zoom on epoch timestamps (~1.67e18 ns, past a double's 2^53): a copy of the
// small CUDA fixture moved to 1,670,000,000,000,000.357 us (tests/browser/make_traces.mjs,
// OPSCOPE_EPOCH_TRACE), served in a folder of single traces (OPSCOPE_SINGLES_URL, the job page
// URL `opscope explore` printed for it). At a 1 us window the width is 1 us, the grid ticks every
// 100 ns with labels 100 ns apart, and a kernel is drawn at its exact pixel; the times the API
// sends are the file's times less the trace's start, to the nanosecond.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import {SINGLES_BASE, openUrl, shot, singlesApi, singlesTrace} from './harness.mjs';

const EPOCH = process.env.OPSCOPE_EPOCH_TRACE;
if (!EPOCH) throw new Error('OPSCOPE_EPOCH_TRACE is not set (run tools/run_browser_tests.sh)');

// The first "ts" (exact ns, BigInt) of an event with this name in the file.
function fileTs(name) {
  const bytes = fs.readFileSync(EPOCH);
  const text = (EPOCH.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('utf8');
  const trace = JSON.parse(text.replace(/("ts"\s*:\s*)(-?\d+(?:\.\d+)?)/g, '$1"$2"'));
  let best = null;
  for (const e of trace.traceEvents) {
    if (e.name !== name || e.ph !== 'X') continue;
    const [whole, frac = ''] = e.ts.split('.');
    const ns = BigInt(whole) * 1000n + BigInt(frac.padEnd(3, '0'));
    if (best === null || ns < best) best = ns;
  }
  return best;
}

test('an epoch-timestamp trace at a 1 us window: width, 100 ns grid, a kernel at its exact pixel', async () => {
  const trace = await singlesTrace('epoch');
  const lanes = await singlesApi(`/api/trace/${trace}/lanes`);
  const hits = await singlesApi(`/api/trace/${trace}/search?regex=1&q=${encodeURIComponent('^void at::native::elementwise_kernel')}&limit=1`);
  assert.ok(hits.total > 0, 'the trace has elementwise kernels');
  const k = hits.events[0];

  const page = await openUrl(`${SINGLES_BASE}#trace=${trace}&tab=details`);
  await page.evaluate((ts) => window.opscopeApp.timeline().setView(ts - 300, ts + 700), k.ts);
  await page.waitForFunction((id) => window.opscopeApp.timeline().rects.some((r) => r.item[4] === id), k.id, {timeout: 10000});
  const seen = await page.evaluate((id) => {
    const tl = window.opscopeApp.timeline();
    const r = tl.rects.find((x) => x.item[4] === id);
    return {t0: tl.t0, t1: tl.t1, ticks: tl.ticks, axis: tl.axisText, x: r.x, left: tl.xOf(tl.t0), width: tl.trackWidth(), item: r.item[0]};
  }, k.id);
  assert.equal(seen.t1 - seen.t0, 1000, `the window is 1 us wide: ${seen.t0}..${seen.t1}`);
  assert.match(seen.axis, /^1\.000 us shown · grid 100 ns$/);
  assert.ok(seen.ticks.length >= 9, `ticks: ${JSON.stringify(seen.ticks)}`);
  for (let i = 1; i < seen.ticks.length; i++) {
    assert.equal(seen.ticks[i].t - seen.ticks[i - 1].t, 100, `ticks 100 ns apart: ${JSON.stringify(seen.ticks)}`);
    const label = (s) => Number(/^(-?\d+) ns$/.exec(s.label)[1]);
    assert.equal(label(seen.ticks[i]) - label(seen.ticks[i - 1]), 100, `labels 100 ns apart: ${JSON.stringify(seen.ticks)}`);
  }
  for (const tick of seen.ticks) assert.equal(tick.t % 100, 0, `ticks on the 100 ns grid: ${JSON.stringify(tick)}`);
  assert.equal(seen.item, k.ts, 'the viewport item starts where the search says');
  const expected = seen.left + 0.3 * seen.width;
  assert.ok(Math.abs(seen.x - expected) < 0.01, `the kernel is drawn at x ${seen.x}, exactly 300 ns in: ${expected}`);
  await shot(page, 'epoch-1us-window');
  // The API's time is the file's, less the trace's start, exactly.
  assert.ok(Number.isSafeInteger(k.ts) && Number.isSafeInteger(lanes.trace.end_ns), 'API times are exact in a double');
  assert.equal(BigInt(lanes.trace.origin_ns) + BigInt(k.ts), fileTs(k.name), `the kernel's ts ${k.ts} + origin ${lanes.trace.origin_ns}`);
  assert.deepEqual(page.errors, []);
  await page.close();
});
