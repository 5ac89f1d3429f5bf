// The trace view's smaller promises: keys work after a checkbox, a radio button or a select was
// clicked, and F/M follow the latest selection (a box after an event); a chain through a deep
// Python stack lists op -> runtime -> kernel first with the frames folded into one row; lane
// labels that would be cut keep their end; the Device tab's annotation labels stay off the lanes;
// the comparison shows `opscope diff`'s kernel section; ProfilerStep* in the op table marks its
// ProfilerStep#N events.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {SINGLES_BASE, T, api, canvasBox, drawn, openPage, openUrl, shot, singlesApi, singlesTrace} from './harness.mjs';

const GEMM_A = 'void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_16x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x256_16x3_nn_align4::Params)';
const LAUNCH = '<built-in function launch>';

const span = (page) => page.evaluate(() => window.opscopeApp.timeline().t1 - window.opscopeApp.timeline().t0);

test('keys after a checkbox, a radio and a select; F and M act on the latest selection', async () => {
  const page = await openPage(`trace=${T.neuron}&tab=ops`);
  await drawn(page);
  await page.waitForSelector('#op-table tbody tr');
  await page.click('#ops-shapes');
  await page.click('#ops-scope-whole');
  await page.selectOption('#color-by', 'kind');
  const whole = await span(page);
  await page.keyboard.press('w');
  await page.keyboard.press('w');
  assert.ok(await span(page) < whole * 0.7, 'W zooms after a select was used');
  await page.click('#ops-device-ann');
  await page.keyboard.press('0');
  assert.ok(Math.abs(await span(page) - whole) < whole * 0.05, '0 shows the whole trace after a checkbox was clicked');
  // An event, then a box elsewhere: M marks the box, F shows the box.
  const mul = (await api(`/api/trace/${T.neuron}/search?regex=1&q=${encodeURIComponent('^aten::mul$')}&limit=3`)).events[2];
  await page.evaluate((id) => window.opscopeApp.select(id, {keepTab: true}), mul.id);
  await page.waitForFunction(() => window.opscopeApp.state.slice !== null);
  const box = await canvasBox(page);
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + 300, box.y + 40);
  await page.mouse.down();
  await page.mouse.move(box.x + 500, box.y + box.h - 30, {steps: 4});
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.waitForFunction(() => window.opscopeApp.state.box !== null);
  const selected = await page.evaluate(() => window.opscopeApp.state.box);
  await page.keyboard.press('m');
  assert.deepEqual(await page.evaluate(() => window.opscopeApp.timeline().markRange), selected, 'M marks the box, not the event');
  await page.keyboard.press('f');
  const view = await page.evaluate(() => [window.opscopeApp.timeline().t0, window.opscopeApp.timeline().t1]);
  assert.ok(view[0] <= selected.t0 && view[1] >= selected.t1 && view[1] - view[0] < (selected.t1 - selected.t0) * 1.5,
            `F shows the box: ${view} for ${JSON.stringify(selected)}`);
  // Clicking an event again makes it the latest.
  await page.evaluate((id) => window.opscopeApp.select(id, {keepTab: true}), mul.id);
  await page.waitForFunction(() => window.opscopeApp.state.slice !== null);
  await page.keyboard.press('m');
  await page.keyboard.press('m');
  assert.deepEqual(await page.evaluate(() => window.opscopeApp.timeline().markRange), {t0: mul.ts, t1: mul.ts + mul.dur});
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a chain through 45 Python frames: op -> runtime -> kernel first, the frames folded; lane labels keep their end', async () => {
  const names = await singlesTrace('names');
  const k = (await singlesApi(`/api/trace/${names}/search?q=${encodeURIComponent(GEMM_A)}&exact=1&limit=1`)).events[0];
  const page = await openUrl(`${SINGLES_BASE}#trace=${names}&tab=details&sel=${k.id}`);
  await page.waitForSelector('#chain .python-frames');
  const chain = await page.$eval('#chain', (c) => {
    const visible = [...c.querySelectorAll('.event-link')].filter((b) => !b.closest('details:not([open])'));
    return {first: visible.slice(0, 3).map((b) => b.dataset.name), last: c.lastElementChild.dataset.role,
            fold: c.querySelector('.python-frames').open, summary: c.querySelector('.python-frames summary').textContent};
  });
  assert.deepEqual(chain.first, ['aten::mm', 'cudaLaunchKernel', GEMM_A], `op -> runtime -> kernel first: ${JSON.stringify(chain)}`);
  assert.equal(chain.last, 'enclosing', 'what encloses the op comes after the chain');
  assert.equal(chain.fold, false, 'the Python frames are folded');
  assert.match(chain.summary, /^45 Python frames \(innermost: <built-in function launch>\)/);
  await page.click('#chain .python-frames summary');
  const frames = await page.$$eval('#chain .python-frames .event-link', (bs) => bs.map((b) => b.dataset.name));
  assert.equal(frames.length, 45);
  assert.equal(frames.at(-1), LAUNCH);
  const steps = await page.$$eval('#chain [data-role="enclosing"] > .chain-level > .event-link', (bs) => bs.map((b) => b.dataset.name));
  assert.deepEqual(steps, ['ProfilerStep#1'], 'other enclosing ops stay in view');
  await shot(page, 'chain-python-folded');
  // The thread's two runtime lanes: their labels are cut but keep their different ends.
  await drawn(page);
  const labels = await page.evaluate(() => {
    const tl = window.opscopeApp.timeline();
    return [...tl.layout.info.values()].filter((l) => / · runtime/.test(l.title)).map((l) => ({title: l.title, text: tl.labelTexts.get(l.id)}));
  });
  assert.equal(labels.length, 2, JSON.stringify(labels));
  assert.notEqual(labels[0].text, labels[1].text, `labels apart: ${JSON.stringify(labels)}`);
  for (const l of labels) {
    assert.ok(l.text.length < l.title.length, `cut: ${JSON.stringify(l)}`);
    assert.ok(l.text.endsWith(l.title.slice(l.title.lastIndexOf(' · '))), `the end is kept: ${JSON.stringify(l)}`);
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the Device tab keeps its annotation labels off the lanes', async () => {
  const exec = (await api(`/api/trace/${T.neuron}/search?q=nc_exec_running&exact=1&limit=1`)).events[0];
  const page = await openPage(`trace=${T.neuron}&tab=device&sel=${exec.id}`);
  await page.waitForFunction(() => window.opscopeApp.deviceTimeline() && window.opscopeApp.deviceTimeline().rects.length > 0, null, {timeout: 10000});
  const seen = await page.evaluate(() => {
    const tl = window.opscopeApp.deviceTimeline();
    const tops = [...tl.layout.lanes.values()].map((L) => tl.screenY(L));
    return {boxes: tl.annotationBoxes, lanesTop: Math.min(...tops), texts: tl.rects.filter((r) => r.w > 36).map((r) => r.y)};
  });
  assert.ok(seen.boxes.length > 0, 'the launch is labelled');
  for (const b of seen.boxes) assert.ok(b.y1 <= seen.lanesTop, `label above the lanes: ${JSON.stringify(seen)}`);
  await shot(page, 'device-labels');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the comparison shows the kernel diff; ProfilerStep* in the op table marks its steps', async () => {
  const page = await openPage(`trace=${T.neuron}&tab=compare&cmp=${T.neuron},${T.compiled}`, {width: 1600, height: 1000});
  await page.waitForSelector('#diff-kernels-title');
  const diff = await api(`/api/diff?a=${T.neuron}&b=${T.compiled}`);
  const n = (c) => diff.kernels.filter((k) => k.change === c).length;
  assert.equal(await page.textContent('#diff-kernels-title'),
               `Kernels (device activity by name): ${n('added')} added, ${n('removed')} removed, ${n('changed')} changed`);
  assert.ok(diff.kernels.length > 0, 'the compiled trace runs other kernels');
  const rows = await page.$$eval('#diff-kernels tbody tr[data-name]', (trs) => trs.map((tr) => tr.dataset.name));
  assert.equal(rows.length, Math.min(50, diff.kernels.length));
  assert.ok(rows.includes(diff.kernels[0].name));
  await page.close();

  const names = await singlesTrace('names');
  const ops = await openUrl(`${SINGLES_BASE}#trace=${names}&tab=ops`);
  await ops.waitForSelector('#op-table tbody tr[data-name="ProfilerStep*"]');
  await ops.click('#op-table tbody tr[data-name="ProfilerStep*"]');
  await ops.waitForFunction(() => {
    const m = window.opscopeApp.timeline().marks;
    return m && [...m.values()].reduce((a, items) => a + items.reduce((b, it) => b + it[3], 0), 0) === 2;
  }, null, {timeout: 10000});
  assert.match(await ops.textContent('#status'), /^2 events of ProfilerStep\* marked/);
  assert.deepEqual(ops.errors, []);
  await ops.close();
});
