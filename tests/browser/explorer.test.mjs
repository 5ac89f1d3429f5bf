// Browser tests of the opscope Explorer in real headless Chromium (driven by playwright-core).
// tools/run_browser_tests.sh starts `opscope explore` on a Neuron profile and a CUDA fixture and
// sets OPSCOPE_URL, CHROMIUM and ARTIFACTS. Screenshots are written to $ARTIFACTS.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {chromium} from 'playwright-core';

const BASE = process.env.OPSCOPE_URL;
const ARTIFACTS = process.env.ARTIFACTS || 'browser-artifacts';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
if (!BASE) throw new Error('OPSCOPE_URL is not set (run tools/run_browser_tests.sh)');
fs.mkdirSync(ARTIFACTS, {recursive: true});

let browser;
let userDataDir;
let context;
let info;
let neuron;  // index of the Neuron-style trace
let cuda;    // index of the CUDA fixture

async function api(p) {
  const res = await fetch(new URL(p, BASE));
  assert.equal(res.status, 200, `${p}: HTTP ${res.status}`);
  return res.json();
}

async function openPage(hash) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.setViewportSize({width: 1500, height: 950});
  await page.goto(new URL('/#' + hash, BASE).toString());
  await page.waitForFunction(() => document.body.dataset.ready === '1' || document.body.dataset.ready === 'error',
                             null, {timeout: 20000});
  assert.equal(await page.evaluate(() => document.body.dataset.ready), '1', `app failed: ${errors.join('; ')}`);
  page.errors = errors;
  return page;
}

async function shot(page, name) {
  await page.screenshot({path: path.join(ARTIFACTS, name + '.png')});
}

// An aten::mul whose dependency chain reaches a device execution.
async function mulWithDevice() {
  const hits = await api(`/api/trace/${neuron}/search?q=${encodeURIComponent('^aten::mul$')}&limit=50`);
  assert.ok(hits.total > 0, 'the Neuron trace has aten::mul events');
  for (const e of hits.events) {
    const chain = await api(`/api/trace/${neuron}/chain/${e.id}`);
    if (chain.levels.some((l) => l.key === 'hardware')) return e;
  }
  assert.fail('no aten::mul reaches a device execution');
}

before(async () => {
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opscope-chromium-'));
  // A persistent context on a fresh, empty profile directory (--user-data-dir).
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
           '--disable-sync', '--no-first-run'],
  });
  browser = context;
  info = await api('/api/info');
  // The Neuron trace of the eager (unfused) run: the one whose RMSNorm is made of aten::mul etc.
  neuron = -1;
  for (const t of info.traces) {
    if (t.device_type !== 'NEURON') continue;
    const hits = await api(`/api/trace/${t.index}/search?q=${encodeURIComponent('^aten::mul$')}&limit=1`);
    if (hits.total > 0) {
      neuron = t.index;
      break;
    }
  }
  cuda = info.traces.findIndex((t) => t.device_type === 'CUDA');
  assert.ok(neuron >= 0, `a Neuron trace is open: ${JSON.stringify(info.traces)}`);
  assert.ok(cuda >= 0, `a CUDA trace is open: ${JSON.stringify(info.traces)}`);
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(userDataDir, {recursive: true, force: true});
});

test('the demo profile opens with its lane groups', async () => {
  const page = await openPage(`trace=${neuron}&tab=details`);
  const groups = await page.$$eval('#groups .group-chip', (els) => els.map((e) => e.dataset.group));
  for (const g of ['framework', 'runtime', 'hardware']) assert.ok(groups.includes(g), `group ${g} in ${groups}`);
  const drawn = await page.evaluate(() => window.opscopeApp.timeline().rects.length);
  assert.ok(drawn > 0, 'events are drawn');
  await shot(page, 'demo-system-trace');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('clicking an aten::mul shows its chain down to nc_exec_running', async () => {
  const mul = await mulWithDevice();
  const page = await openPage(`trace=${neuron}&tab=details`);
  // Zoom to it, then click it on the canvas like a user would.
  await page.evaluate((ref) => window.opscopeApp.timeline().reveal(ref), mul);
  await page.waitForFunction(() => window.opscopeApp.locate('aten::mul') !== null, null, {timeout: 10000});
  const at = await page.evaluate(() => window.opscopeApp.locate('aten::mul'));
  await page.mouse.click(at.x, at.y);
  await page.waitForSelector('#chain [data-level="hardware"]', {timeout: 10000});
  assert.equal(await page.$eval('#details', (e) => e.dataset.selectedName), 'aten::mul');
  const hw = await page.$eval('#chain [data-level="hardware"]', (e) => e.textContent);
  assert.match(hw, /nc_exec_running/);
  const runtime = await page.$eval('#chain [data-level="runtime"]', (e) => e.textContent);
  assert.match(runtime, /nrta_execute_schedule/);
  const role = await page.$eval('#chain [data-level="hardware"]', (e) => e.closest('.chain-role').dataset.role);
  assert.equal(role, 'downstream');
  const edges = await page.evaluate(() => window.opscopeApp.timeline().chain.edges.length);
  assert.ok(edges >= 2, 'arrows are drawn along the chain');
  await shot(page, 'demo-chain');
  // Jumping to the execution from the chain list selects it.
  await page.click('#chain [data-level="hardware"] .event-link');
  await page.waitForFunction(() => document.querySelector('#details').dataset.selectedName === 'nc_exec_running');
  // The device trace of that execution.
  await page.click('#tabs button[data-tab="device"]');
  await page.waitForFunction(() => document.querySelector('#device-legend').textContent.length > 0);
  const engines = await page.$$eval('#device-legend .legend-item', (els) => els.length);
  if (engines > 0) {
    // Instruction lanes of the execution, coloured by the op that issued them.
    await page.waitForFunction(() => window.opscopeApp.deviceTimeline().rects.length > 0, null, {timeout: 10000});
  }
  await shot(page, 'demo-device-trace');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the op table sorts by every column and highlights events', async () => {
  const page = await openPage(`trace=${neuron}&tab=ops`);
  await page.waitForSelector('#op-table tbody tr');
  const column = async (key) => page.$$eval(`#op-table tbody tr`, (rows, k) => {
    const ths = [...document.querySelectorAll('#op-table th')];
    const i = ths.findIndex((th) => th.dataset.key === k);
    return rows.map((r) => r.children[i].textContent);
  }, key);
  await page.click('#op-table th[data-key="count"]');
  let counts = (await column('count')).map(Number);
  assert.deepEqual(counts, [...counts].sort((a, b) => b - a), 'descending by count');
  assert.equal(await page.$eval('#op-table th[data-key="count"]', (e) => e.getAttribute('aria-sort')), 'descending');
  await page.click('#op-table th[data-key="count"]');
  counts = (await column('count')).map(Number);
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'ascending by count');
  await page.click('#op-table th[data-key="name"]');
  const names = await column('name');
  assert.deepEqual(names, [...names].sort((a, b) => a.localeCompare(b)), 'ascending by name');
  assert.equal(await page.$eval('#op-table th[data-key="name"]', (e) => e.getAttribute('aria-sort')), 'ascending');
  await page.click('#op-table tbody tr[data-name="aten::mul"]');
  assert.equal(await page.evaluate(() => window.opscopeApp.timeline().highlightName), 'aten::mul');
  await shot(page, 'demo-op-table');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a CUDA fixture trace renders', async () => {
  const page = await openPage(`trace=${cuda}&tab=summary`);
  const groups = await page.$$eval('#groups .group-chip', (els) => els.map((e) => e.dataset.group));
  assert.ok(groups.includes('framework'), `host threads in ${groups}`);
  assert.ok(groups.includes('hardware'), `device streams in ${groups}`);
  const drawn = await page.evaluate(() => window.opscopeApp.timeline().rects.length);
  assert.ok(drawn > 0, 'events are drawn');
  await page.waitForSelector('.findings li');
  await shot(page, 'cuda-fixture');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('zoom keys, box selection and the URL keep the view', async () => {
  const page = await openPage(`trace=${neuron}&tab=details`);
  const span0 = await page.evaluate(() => window.opscopeApp.timeline().t1 - window.opscopeApp.timeline().t0);
  await page.mouse.move(700, 300);
  await page.keyboard.press('w');
  await page.keyboard.press('w');
  const span1 = await page.evaluate(() => window.opscopeApp.timeline().t1 - window.opscopeApp.timeline().t0);
  assert.ok(span1 < span0 * 0.7, `W zooms in (${span0} -> ${span1})`);
  await page.keyboard.press('d');
  // Box selection summarises what it covers.
  const box = await page.$eval('#timeline', (c) => {
    const b = c.getBoundingClientRect();
    return {x: b.left, y: b.top, w: b.width, h: b.height};
  });
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + 300, box.y + 30);
  await page.mouse.down();
  await page.mouse.move(box.x + 900, box.y + box.h - 20, {steps: 5});
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.waitForSelector('#selection h3');
  assert.match(await page.$eval('#selection', (e) => e.textContent), /Selection: .* events/s);
  await page.waitForTimeout(300);
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /t0=-?\d+/);
  // Reopening the URL restores the time range.
  const view = await page.evaluate(() => [window.opscopeApp.timeline().t0, window.opscopeApp.timeline().t1]);
  const again = await openPage(hash.slice(1));
  const view2 = await again.evaluate(() => [window.opscopeApp.timeline().t0, window.opscopeApp.timeline().t1]);
  assert.ok(Math.abs(view2[0] - view[0]) <= 1 && Math.abs(view2[1] - view[1]) <= 1, `${view} vs ${view2}`);
  // ...and the box selection.
  assert.match(hash, /box=-?\d+(,|%2C)-?\d+/);
  await again.waitForSelector('#selection h3');
  await shot(page, 'demo-selection');
  assert.deepEqual(page.errors, []);
  await page.close();
  await again.close();
});

test('search, summary and comparison views', async () => {
  const page = await openPage(`trace=${neuron}&tab=summary`);
  await page.waitForSelector('.findings li');
  await shot(page, 'demo-summary');
  await page.fill('#search', 'nrta_.*');
  await page.press('#search', 'Enter');
  await page.waitForSelector('#search-results .event-link');
  assert.match(await page.$eval('#search-results', (e) => e.textContent), /events match/);
  await page.click('#tabs button[data-tab="compare"]');
  await page.waitForSelector('#diff-table');
  const canvases = await page.$$eval('#compare-lanes canvas', (c) => c.length);
  assert.ok(canvases >= 2, 'traces are stacked');
  await shot(page, 'compare');
  assert.deepEqual(page.errors, []);
  await page.close();
});
