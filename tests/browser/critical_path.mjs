// The Critical path panel: HTA's critical path of a step on the CUDA fixture (simple_add), its
// breakdown and events, the idle-time table, and the path marked on the timeline.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {T, openPage, shot, drawn} from './harness.mjs';

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
