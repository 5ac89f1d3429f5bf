// The views: system trace of the demo profile, chain, device view (Neuron and CUDA), op table,
// box selection, summary and comparison.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {T, api, openPage, shot, drawn, canvasBox} from './harness.mjs';

// A duration as the Explorer writes one of at least 1 ms and under 1 s.
function fmtMs(ns) {
  assert.ok(ns >= 1e6 && ns < 1e9, `${ns} ns is in ms`);
  return (ns / 1e6).toFixed(3) + ' ms';
}

// An aten::mul whose dependency chain reaches a device execution.
async function mulWithDevice() {
  const hits = await api(`/api/trace/${T.neuron}/search?regex=1&q=${encodeURIComponent('^aten::mul$')}&limit=50`);
  assert.ok(hits.total > 0, 'the Neuron trace has aten::mul events');
  for (const e of hits.events) {
    const chain = await api(`/api/trace/${T.neuron}/chain/${e.id}`);
    if (chain.levels.some((l) => l.key === 'hardware')) return e;
  }
  assert.fail('no aten::mul reaches a device execution');
}

test('the demo profile opens with its lane groups', async () => {
  const page = await openPage(`trace=${T.neuron}&tab=details`);
  const groups = await page.$$eval('#groups .group-chip', (els) => els.map((e) => e.dataset.group));
  for (const g of ['framework', 'runtime', 'hardware']) assert.ok(groups.includes(g), `group ${g} in ${groups}`);
  await drawn(page);
  await shot(page, 'demo-system-trace');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('an aten::mul: its chain down to nc_exec_running, grouped fan-out, the device view', async () => {
  const mul = await mulWithDevice();
  const page = await openPage(`trace=${T.neuron}&tab=details`);
  await page.evaluate((ref) => window.opscopeApp.timeline().reveal(ref), mul);
  await page.waitForFunction(() => window.opscopeApp.locate('aten::mul') !== null, null, {timeout: 10000});
  const at = await page.evaluate(() => window.opscopeApp.locate('aten::mul'));
  await page.mouse.click(at.x, at.y);
  await page.waitForSelector('#chain [data-level="hardware"]', {timeout: 10000});
  assert.equal(await page.$eval('#details', (e) => e.dataset.selectedName), 'aten::mul');
  assert.match(await page.$eval('#chain [data-level="hardware"]', (e) => e.textContent), /nc_exec_running/);
  assert.match(await page.$eval('#chain [data-level="runtime"]', (e) => e.textContent), /nrta_execute_schedule/);
  assert.equal(await page.$eval('#chain [data-level="hardware"]', (e) => e.closest('.chain-role').dataset.role), 'downstream');
  // The instruction fan-out: one group per engine / DMA queue with its count, paged.
  const groups = await page.$$eval('#chain [data-level="instructions"] .lane-group', (els) =>
    els.map((g) => ({count: Number(g.querySelector('.count').textContent), buttons: g.querySelectorAll('.lane-events .event-link').length})));
  const total = await page.$eval('#chain [data-level="instructions"] .level-title', (e) => Number(/\((\d+)\)/.exec(e.textContent)[1]));
  assert.ok(groups.length > 1, 'instructions grouped by lane');
  assert.equal(groups.reduce((a, g) => a + g.count, 0), total, 'group counts add up to the instructions');
  assert.ok(groups.every((g) => g.buttons <= 8), 'each group lists a page at a time');
  const edges = await page.evaluate(() => window.opscopeApp.timeline().chain.edges.length);
  assert.ok(edges >= 2, 'arrows are drawn along the chain');
  await page.click('#chain [data-level="instructions"] .lane-group summary');
  await shot(page, 'demo-chain');
  // The execution from the chain list.
  await page.click('#chain [data-level="hardware"] .event-link');
  await page.waitForFunction(() => document.querySelector('#details').dataset.selectedName === 'nc_exec_running');
  // Device view: every lane fits, utilisation per engine, the fixed launch cost labelled.
  await page.click('#tabs button[data-tab="device"]');
  await page.waitForSelector('#device-util tr[data-lane]');
  await page.waitForFunction(() => window.opscopeApp.deviceTimeline().rects.length > 0, null, {timeout: 10000});
  const fit = await page.evaluate(() => {
    const tl = window.opscopeApp.deviceTimeline();
    return {content: tl.scrollTop() + tl.layout.contentH, height: tl.height, lanes: tl.layout.lanes.size,
            rows: document.querySelectorAll('#device-util tr[data-lane]').length, annotations: tl.annotations.map((a) => a.label)};
  });
  assert.ok(fit.content <= fit.height + 1, `lanes fit the pane: ${JSON.stringify(fit)}`);
  assert.equal(fit.rows, fit.lanes, 'one utilisation row per lane');
  assert.ok(fit.annotations.includes('launch (before the first instruction)'), `the stretch before the first instruction is labelled: ${fit.annotations}`);
  // ... with the model's phases before the engines, as the execution phases lane shows them.
  assert.match(await page.$eval('#device-stats', (e) => e.textContent), /Launch: [\d.]+ us from the start .*: .*launch [\d.]+ us/);
  // Clicking an instruction keeps the zoom and shows its details (args included) in place.
  const before = await page.evaluate(() => [window.opscopeApp.deviceTimeline().t0, window.opscopeApp.deviceTimeline().t1]);
  const inst = await page.evaluate(() => {
    const tl = window.opscopeApp.deviceTimeline();
    const r = tl.rects.find((x) => x.item[5] === 1);
    const b = tl.canvas.getBoundingClientRect();
    return {x: b.left + r.x + Math.min(r.w / 2, 3), y: b.top + r.y + r.h / 2, id: r.item[4]};
  });
  await page.mouse.click(inst.x, inst.y);
  await page.waitForFunction((id) => document.getElementById('device-details').dataset.selectedId === String(id), inst.id);
  assert.equal(await page.evaluate(() => window.opscopeApp.state.tab), 'device');
  const after = await page.evaluate(() => [window.opscopeApp.deviceTimeline().t0, window.opscopeApp.deviceTimeline().t1]);
  assert.deepEqual(after, before, 'the zoom is kept');
  assert.match(await page.$eval('#device-details', (e) => e.textContent), /args/);
  await shot(page, 'demo-device-view');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the op table: sorting, filter, kind column, short kernel names, ProfilerStep* once', async () => {
  const page = await openPage(`trace=${T.neuron}&tab=ops`);
  await page.waitForSelector('#op-table tbody tr');
  const column = async (key) => page.$$eval('#op-table tbody tr', (rows, k) => {
    const i = [...document.querySelectorAll('#op-table th')].findIndex((th) => th.dataset.key === k);
    return rows.map((r) => r.children[i].textContent);
  }, key);
  await page.click('#op-table th[data-key="count"]');
  let counts = (await column('count')).map(Number);
  assert.deepEqual(counts, [...counts].sort((a, b) => b - a), 'descending by count');
  await page.click('#op-table th[data-key="count"]');
  counts = (await column('count')).map(Number);
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'ascending by count');
  await page.waitForTimeout(200);
  assert.match(await page.evaluate(() => location.hash), /sort=count%3Aasc/);
  await page.click('#op-table th[data-key="name"]');
  const names = await column('name');
  assert.deepEqual(names, [...names].sort((a, b) => a.localeCompare(b)), 'ascending by name');
  await page.click('#op-table tbody tr[data-name="aten::mul"]');
  await page.waitForFunction(() => window.opscopeApp.timeline().marks && window.opscopeApp.timeline().marks.size > 0);
  assert.deepEqual(await page.evaluate(() => window.opscopeApp.timeline().highlight), {q: 'aten::mul', exact: true});
  const kinds = new Set(await column('kind'));
  for (const k of ['cpu op', 'runtime', 'kernel']) assert.ok(kinds.has(k), `kind ${k} in ${[...kinds]}`);
  await page.fill('#ops-filter', 'mul|rsqrt');
  assert.ok((await column('name')).every((n) => /mul|rsqrt/.test(n)));
  await shot(page, 'demo-op-table');
  await page.close();

  // A real CUDA trace: templated kernel names shortened with the full name on hover; the step
  // annotation once.
  const cuda = await openPage(`trace=${T.deep}&tab=ops`);
  await cuda.waitForSelector('#op-table tbody tr');
  const steps = await cuda.$$eval('#op-table tbody tr', (rows) => rows.filter((r) => r.dataset.name === 'ProfilerStep*').length);
  assert.equal(steps, 1, 'ProfilerStep* once');
  const short = await cuda.$$eval('#op-table tbody td.name-cell[title]', (tds) => tds.map((td) => [td.textContent, td.title]));
  const templated = short.find(([s, full]) => full.includes('<') && s.includes('<…>'));
  assert.ok(templated, 'a templated kernel name is shortened');
  assert.ok(templated[0].length < templated[1].length);
  await shot(cuda, 'cuda-op-table');
  assert.deepEqual(page.errors, []);
  await cuda.close();
});

test('a CUDA fixture: lanes, summary, and the device tab shows kernels per stream', async () => {
  const page = await openPage(`trace=${T.cuda}&tab=summary`);
  const groups = await page.$$eval('#groups .group-chip', (els) => els.map((e) => e.dataset.group));
  assert.ok(groups.includes('framework') && groups.includes('hardware'), `groups: ${groups}`);
  await drawn(page);
  await page.waitForSelector('.findings li');
  // The Summary shows the report's figures: the busy row is `opscope report --json`'s busy_ns.
  const figures = (await api(`/api/trace/${T.cuda}/summary`)).figures;
  const busy = await page.$$eval('#summary-timeline tr', (rows) => rows.find((r) => r.children[0].textContent === 'busy').children[1].textContent);
  assert.equal(busy, fmtMs(figures.device_timeline.busy_ns));
  assert.match(await page.$eval('.findings', (e) => e.textContent), new RegExp(`${figures.device_timeline.activities} activities`));
  await shot(page, 'cuda-fixture');
  await page.click('#tabs button[data-tab="device"]');
  assert.match(await page.$eval('#device-legend', (e) => e.textContent), /kernels per stream/);
  const kernel = (await api(`/api/trace/${T.cuda}/search?regex=1&q=${encodeURIComponent('^void')}&limit=1`)).events[0];
  await page.evaluate((k) => window.opscopeApp.select(k.id, {keepTab: true}), kernel);
  await page.waitForFunction(() => /Kernels per stream/.test(document.getElementById('device-legend').textContent));
  const text = await page.$eval('#panel-device', (e) => e.textContent);
  assert.doesNotMatch(text, /Neuron|DEVICE mode|nc_exec/i, 'no Neuron advice on a CUDA trace');
  await page.waitForFunction(() => window.opscopeApp.deviceTimeline().rects.length > 0);
  await shot(page, 'cuda-device-streams');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('zoom keys, box selection and the URL keep the view', async () => {
  const page = await openPage(`trace=${T.neuron}&tab=details`);
  const span0 = await page.evaluate(() => window.opscopeApp.timeline().t1 - window.opscopeApp.timeline().t0);
  await page.mouse.move(700, 300);
  await page.keyboard.press('w');
  await page.keyboard.press('w');
  const span1 = await page.evaluate(() => window.opscopeApp.timeline().t1 - window.opscopeApp.timeline().t0);
  assert.ok(span1 < span0 * 0.7, `W zooms in (${span0} -> ${span1})`);
  await page.keyboard.press('d');
  const box = await canvasBox(page);
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
  assert.match(hash, /box=-?\d+(,|%2C)-?\d+/);
  const view = await page.evaluate(() => [window.opscopeApp.timeline().t0, window.opscopeApp.timeline().t1]);
  const again = await openPage(hash.slice(1));
  const view2 = await again.evaluate(() => [window.opscopeApp.timeline().t0, window.opscopeApp.timeline().t1]);
  assert.ok(Math.abs(view2[0] - view[0]) <= 1 && Math.abs(view2[1] - view[1]) <= 1, `${view} vs ${view2}`);
  await again.waitForSelector('#selection h3');
  await shot(page, 'demo-selection');
  assert.deepEqual(page.errors, []);
  await page.close();
  await again.close();
});

test('comparison: full-width panes sharing the height, device lanes first, the pair in the URL', async () => {
  const page = await openPage(`trace=${T.neuron}&tab=compare&cmp=${T.neuron},${T.compiled}`, {width: 1600, height: 1000});
  await page.waitForSelector('#diff-table');
  const panes = await page.$$eval('#compare-lanes .compare-item', (els) => els.map((e) => {
    const b = e.getBoundingClientRect();
    return {top: b.top, bottom: b.bottom, width: b.width};
  }));
  assert.equal(panes.length, 2);
  for (const p of panes) {
    assert.ok(p.bottom <= 1000 && p.top >= 0, `every pane visible at 1600x1000: ${JSON.stringify(panes)}`);
    assert.ok(p.width > 1500, 'full width');
  }
  const first = await page.evaluate(() => window.opscopeApp.compareTimelines().map((tl) => tl.layout.entries[0].path));
  assert.deepEqual(first, ['hardware', 'hardware'], 'device lanes first');
  const header = await page.$$eval('#diff-table th', (ths) => ths.map((t) => t.textContent));
  assert.ok(header.some((h) => /device exec\. A/.test(h)), `device executions per op: ${header}`);
  // The diff's rows are the report's: the compiled region is a row with its calls and device total,
  // no row says "0 -> 0" calls, and the change in device executions is stated.
  const diffRows = await page.$$eval('#diff-table tbody tr[data-name]', (trs) => trs.map((tr) => {
    const cells = [...tr.children].map((td) => td.textContent);
    return {name: tr.dataset.name, calls: [Number(cells[2]), Number(cells[3])], execs: [Number(cells[4]), Number(cells[5])]};
  }));
  const region = diffRows.find((r) => r.name.startsWith('Torch-Compiled Region'));
  assert.ok(region && region.calls[1] > 0, `Torch-Compiled Region in the diff: ${JSON.stringify(diffRows)}`);
  assert.ok(diffRows.every((r) => r.calls[0] + r.calls[1] > 0), `no row with 0 -> 0 calls: ${JSON.stringify(diffRows)}`);
  const execs = diffRows.reduce((s, r) => [s[0] + r.execs[0], s[1] + r.execs[1]], [0, 0]);
  const cmp = await api(`/api/diff?a=${T.neuron}&b=${T.compiled}`);
  assert.ok(execs[0] > execs[1], `fewer device executions after compile(): ${execs}`);
  assert.match(await page.$eval('#diff-timelines', (p) => p.textContent),
               new RegExp(`\\(${cmp.timeline_a.activities} \u2192 ${cmp.timeline_b.activities}\\)`));
  // Another pair, and an alignment: both kept in the URL.
  await page.selectOption('#diff-b', String(T.cuda));
  await page.waitForFunction((c) => (window.opscopeApp.compareTimelines()[1] || {}).trace === c, T.cuda);
  await page.fill('#align', 'aten::');
  await page.click('#align-button');
  await page.waitForTimeout(300);
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, new RegExp(`cmp=${T.neuron}%2C${T.cuda}`));
  assert.match(hash, /align=aten%3A%3A/);
  await shot(page, 'compare');
  const again = await openPage(hash.slice(1), {width: 1600, height: 1000});
  await again.waitForSelector('#diff-table');
  assert.equal(await again.$eval('#diff-b', (s) => s.value), String(T.cuda));
  assert.equal(await again.$eval('#align', (s) => s.value), 'aten::');
  assert.deepEqual(page.errors, []);
  await again.close();
  await page.close();
});
