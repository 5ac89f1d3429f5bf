// The Critical path panel: HTA's critical path of a step on the CUDA fixture (simple_add), its
// breakdown and events, the idle-time table, and the path marked on the timeline.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {T, api, openPage, shot, drawn} from './harness.mjs';

test('the critical path of a CUDA step: breakdown, events, idle time, marked on the timeline', async () => {
  const page = await openPage(`trace=${T.cuda}&tab=critical`);
  await drawn(page);
  await page.waitForSelector('#cp-headline', {timeout: 20000});
  const shares = await page.$$eval('#cp-breakdown tbody tr', (rows) => rows.map((r) => r.children[0].textContent));
  assert.deepEqual(shares.sort(), ['communication', 'device compute', 'host ops', 'idle (kernel-kernel)', 'launch overhead']);
  const events = await page.$$eval('#cp-events .event-link', (els) => els.length);
  assert.ok(events > 0, 'the path lists its events');
  assert.ok(await page.$$eval('#cp-idle tbody tr', (rows) => rows.length) > 0, 'idle time per stream');
  await page.click('#cp-highlight');
  await page.waitForFunction(() => {
    const m = window.opscopeApp.timeline().marks;
    return m && [...m.values()].some((items) => items.length > 0);
  }, null, {timeout: 10000});
  await shot(page, 'critical-path');
  // An event of the list jumps to it in the timeline and selects it.
  const name = await page.$eval('#cp-events .event-link', (e) => e.dataset.name);
  await page.click('#cp-events .event-link');
  await page.waitForFunction((n) => document.querySelector('#details').dataset.selectedName === n, name, {timeout: 10000});
  // Another step that does not exist says why there is no path.
  await page.click('#tabs button[data-tab="critical"]');
  await page.fill('#cp-step', 'NoSuchStep');
  await page.click('#cp-go');
  await page.waitForSelector('#cp-error', {timeout: 10000});
  assert.match(await page.$eval('#cp-error', (e) => e.textContent), /NoSuchStep/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

// The path's share of the step and why the rest is missing: the tab's coverage table matches the
// API's figures (which add up to the step), and with the highlight on the timeline shades each
// stretch the path leaves out in its cause's colour, in a band under the axis.
test('the critical path shows its share of the step and the rest by cause, in the tab and on the timeline', async () => {
  const cp = await api(`/api/trace/${T.cuda}/critical_path`);
  const c = cp.coverage;
  const rest = Object.values(c.rest);
  assert.equal(c.path_ns + rest.reduce((a, b) => a + b, 0), c.total_ns, 'the parts add up to the step');
  assert.ok(c.gaps.length > 0, 'the path leaves stretches out');
  const page = await openPage(`trace=${T.cuda}&tab=critical`);
  await drawn(page);
  await page.waitForSelector('#cp-covered', {timeout: 20000});
  const covered = await page.$eval('#cp-covered', (e) => e.textContent);
  assert.match(covered, new RegExp(`${(100 * c.path_ns / c.total_ns).toFixed(1)}%`), covered);
  const causes = await page.$$eval('#cp-coverage tbody tr', (rows) => rows.map((r) => r.dataset.name));
  assert.equal(causes.length, rest.filter((v) => v !== 0).length, `one row per cause: ${causes}`);
  assert.equal(await page.$$eval('.cp-note', (n) => n.length), 0, 'this trace records cuda_sync events: no note');
  // Highlight: the overlay holds every gap; zoomed on the longest, its colour is in the band.
  await page.click('#cp-highlight');
  await page.waitForFunction(() => window.opscopeApp.timeline().coverage, null, {timeout: 10000});
  const overlay = await page.evaluate(() => window.opscopeApp.timeline().coverage.gaps.length);
  assert.equal(overlay, c.gaps.length);
  const longest = c.gaps.reduce((a, g) => (g.end_ns - g.start_ns > a.end_ns - a.start_ns ? g : a));
  const pixel = await page.evaluate(async (g) => {
    const {AXIS_H} = await import('/lanes.js');
    const tl = window.opscopeApp.timeline();
    const span = g.end_ns - g.start_ns;
    tl.setView(g.start_ns - span, g.end_ns + span);
    tl.draw();
    const x = (tl.xOf(g.start_ns) + tl.xOf(g.end_ns)) / 2;
    const d = tl.ctx.getImageData(Math.round(x * tl.dpr), Math.round((AXIS_H + 2) * tl.dpr), 1, 1).data;
    return [d[0], d[1], d[2]];
  }, longest);
  const expected = {host_gap: [70, 130, 210], sync_wait: [220, 90, 60], runtime_lock: [150, 90, 190],
                    before_path: [120, 125, 140], after_path: [120, 125, 140], thread_not_connected: [235, 175, 30]};
  const want = expected[longest.cause];
  // The band is the cause's colour at its alpha over the lanes' light background.
  assert.ok(pixel.every((v, i) => Math.abs(v - want[i]) < 110) && !pixel.every((v) => v > 235),
            `band at the ${longest.cause} gap: rgb(${pixel}) against rgb(${want})`);
  await shot(page, 'critical-path-coverage');
  await page.click('#cp-highlight');
  await page.waitForFunction(() => !window.opscopeApp.timeline().coverage, null, {timeout: 10000});
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a trace without cuda_sync events: the critical path says what it cannot see', async () => {
  const cp = await api(`/api/trace/${T.deep}/critical_path`);
  assert.equal(cp.coverage.notes.length, 1);
  const page = await openPage(`trace=${T.deep}&tab=critical`);
  await drawn(page);
  await page.waitForSelector('#cp-covered', {timeout: 30000});
  const notes = await page.$$eval('.cp-note', (n) => n.map((e) => e.textContent));
  assert.equal(notes.length, 1);
  assert.match(notes[0], /cuda_sync/);
  assert.deepEqual(page.errors, []);
  await page.close();
});
