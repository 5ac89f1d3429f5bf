// The memory lanes on a real profile_memory trace (the MI300 Qwen fixture, CPU and HIP:0
// [memory] events): one lane per device at the top of the hardware group, its peak label and
// time equal to `opscope report --memory --json` (OPSCOPE_MEMORY_REPORT, written by
// tools/run_browser_tests.sh), hover values, the peak's holders on click, folding kept in the
// URL; and no memory lane on a trace without [memory] events.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {T, api, openPage, shot, drawn, canvasBox} from './harness.mjs';

// The report's memory section, read from the CLI's output (never from the Explorer's API).
function reportMemory() {
  const file = process.env.OPSCOPE_MEMORY_REPORT;
  assert.ok(file && fs.existsSync(file), 'OPSCOPE_MEMORY_REPORT names the report of the Qwen trace');
  return JSON.parse(fs.readFileSync(file, 'utf8')).memory;
}

// torch.profiler's memory format (_format_memory: 1024-based, two decimals), as the report prints.
function torchBytes(b) {
  const KB = 1024, MB = KB * 1024, GB = MB * 1024;
  if (Math.abs(b) >= GB) return `${(b / GB).toFixed(2)} Gb`;
  if (Math.abs(b) >= MB) return `${(b / MB).toFixed(2)} Mb`;
  if (Math.abs(b) >= KB) return `${(b / KB).toFixed(2)} Kb`;
  return `${b} b`;
}

// The memory group of a /lanes answer (null when there is none).
function memoryGroup(lanes) {
  for (const g of lanes.groups) for (const n of g.groups || []) if (n.key === 'memory') return {parent: g, group: n};
  return null;
}

async function peaks(page) {
  return page.evaluate(() => window.opscopeApp.timeline().memoryPeaks.map((p) => ({...p})));
}

test('memory lanes: one per device, the peak as the report gives it, hover and click', async () => {
  const report = reportMemory();
  assert.ok(report.devices.length >= 2, `the Qwen trace has CPU and HIP memory: ${report.devices.map((d) => d.device)}`);
  const lanes = await api(`/api/trace/${T.deep}/lanes`);
  const found = memoryGroup(lanes);
  // The report's times are the trace's own; the Explorer's count from the trace's start.
  const origin = BigInt(lanes.trace.origin_ns);
  const rel = (ns) => Number(BigInt(ns) - origin);
  assert.ok(found && found.parent.key === 'hardware', 'the memory group is nested in the hardware group');
  assert.deepEqual(found.group.lanes.map((l) => l.title), report.devices.map((d) => `Memory: ${d.device}`));
  const ids = found.group.lanes.map((l) => l.id);

  // Host groups folded, so the hardware group (memory lanes on top) is on screen.
  const page = await openPage(`trace=${T.deep}&tab=details&collapsed=framework,interaction,runtime`);
  await drawn(page);
  await page.waitForFunction((n) => window.opscopeApp.timeline().memoryPeaks.length === n, ids.length, {timeout: 10000});
  const order = await page.evaluate(([mem]) => {
    const tl = window.opscopeApp.timeline();
    const hw = [...tl.layout.lanes.entries()].filter(([, L]) => !L.lane.memory).map(([, L]) => L.y);
    return {memY: tl.layout.lanes.get(mem).y, streamY: Math.min(...hw)};
  }, ids);
  assert.ok(order.memY < order.streamY, `memory lanes above the device streams: ${JSON.stringify(order)}`);
  const drawnPeaks = await peaks(page);
  for (const [k, d] of report.devices.entries()) {
    const p = drawnPeaks.find((x) => x.lane === ids[k]);
    assert.ok(p, `${d.device}: its peak is drawn`);
    assert.equal(p.label, `peak ${torchBytes(d.peak_allocated)}`, `${d.device}: the peak label is the report's`);
    assert.equal(p.bytes, d.peak_allocated);
    assert.equal(p.ts, rel(d.peak_ts_ns));
    // The drawn step reaches the peak exactly: the highest bucket of the viewport is the peak.
    const highest = await page.evaluate((lane) => Math.max(...window.opscopeApp.timeline().data.memory.get(lane).map((q) => q[2])), ids[k]);
    assert.equal(highest, d.peak_allocated, `${d.device}: the drawn maximum is the peak`);
  }
  await shot(page, 'memory-lanes');

  // Hover on the HIP lane below its peak: time, allocated and reserved.
  const hip = report.devices.findIndex((d) => d.device.startsWith('HIP'));
  const peak = drawnPeaks.find((x) => x.lane === ids[hip]);
  const box = await canvasBox(page);
  const laneBottom = await page.evaluate((id) => {
    const tl = window.opscopeApp.timeline();
    const L = tl.layout.lanes.get(id);
    return tl.screenY(L) + L.h - 4;
  }, ids[hip]);
  const hx = Math.round(box.x + peak.x);
  const hy = Math.round(box.y + laneBottom);
  await page.mouse.move(hx, hy);
  const tip = await page.textContent('#tooltip');
  // The bucket in force at the hovered time, from the drawn data.
  const bucket = await page.evaluate(([id, x]) => {
    const tl = window.opscopeApp.timeline();
    const t = tl.tOf(x - tl.canvas.getBoundingClientRect().left);
    return tl.data.memory.get(id).filter((q) => q[0] <= t).pop();
  }, [ids[hip], hx]);
  assert.ok(bucket, 'a sample in force under the cursor');
  assert.match(tip, /^Memory: HIP:0/);
  assert.match(tip, /time /);
  assert.ok(tip.includes(`allocated ${torchBytes(bucket[1] === bucket[2] ? bucket[3] : bucket[1])}`), `allocated in: ${tip}`);
  assert.ok(tip.includes(torchBytes(bucket[2])), `the bucket's highest in: ${tip}`);
  assert.ok(tip.includes(torchBytes(bucket[5])), `reserved in: ${tip}`);
  assert.ok(tip.includes(`peak ${torchBytes(report.devices[hip].peak_allocated)}`), tip);

  // Click the peak: the view zooms around it and the Details panel lists the report's holders.
  await page.mouse.click(box.x + peak.x, box.y + peak.y - 3);
  await page.waitForSelector('#details table.memory-holders');
  const view = await page.evaluate(() => ({t0: window.opscopeApp.timeline().t0, t1: window.opscopeApp.timeline().t1}));
  const d = report.devices[hip];
  assert.ok(view.t0 < rel(d.peak_ts_ns) && rel(d.peak_ts_ns) < view.t1, `zoomed to the peak: ${JSON.stringify(view)}`);
  const rows = await page.$$eval('#details table.memory-holders tbody tr',
                                 (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.deepEqual(rows, d.holders_at_peak.map((h) => [h.op, torchBytes(h.bytes), h.allocations.toLocaleString('en-US')]));
  await shot(page, 'memory-peak-holders');

  // Fold the memory group from its header: the lanes go, the URL keeps the fold, a reload too.
  await page.evaluate(() => window.opscopeApp.timeline().toggleGroup('hardware/memory'));
  await page.waitForTimeout(250);
  const hash = await page.evaluate(() => location.hash);
  assert.match(decodeURIComponent(hash), /collapsed=[^&]*hardware\/memory/);
  const again = await openPage(hash.slice(1));
  const state = await again.evaluate((mem) => ({
    collapsed: [...window.opscopeApp.timeline().layout.collapsed], shown: mem.some((id) => window.opscopeApp.timeline().layout.lanes.has(id)),
  }), ids);
  assert.ok(state.collapsed.includes('hardware/memory'), JSON.stringify(state));
  assert.equal(state.shown, false, 'folded memory lanes are not laid out');
  assert.deepEqual(page.errors, []);
  assert.deepEqual(again.errors, []);
  await again.close();
  await page.close();
});

test('no memory lane on a trace without [memory] events', async () => {
  const lanes = await api(`/api/trace/${T.cuda}/lanes`);
  assert.equal(lanes.trace.memory_events, 0);
  assert.equal(memoryGroup(lanes), null);
  const page = await openPage(`trace=${T.cuda}&tab=details`);
  await drawn(page);
  const memoryLanes = await page.evaluate(() => [...window.opscopeApp.timeline().layout.lanes.values()].filter((L) => L.lane.memory).length);
  assert.equal(memoryLanes, 0);
  assert.deepEqual(await peaks(page), []);
  assert.deepEqual(page.errors, []);
  await page.close();
});
