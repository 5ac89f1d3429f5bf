// The job page's timeline, the trace view's renderer over every rank (the generated job, moved to
// epoch timestamps by tools/run_browser_tests.sh): exact at a 1 us window, a click on a kernel
// selects its collective, skew marks at every zoom, the straggler's header highlighted, the
// collectives table sortable, filterable and complete with the per-(collective, size) summary,
// zoom and selection in the URL, the selection's label never pinned at the edge, the keyboard;
// and a folder of single traces that is not one job opens them one by one, saying why.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {openUrl, shot} from './harness.mjs';

const JOB_URL = process.env.OPSCOPE_JOB_URL;
const REPORT = process.env.OPSCOPE_JOB_REPORT;
const SINGLES = process.env.OPSCOPE_SINGLES_URL;
if (!JOB_URL || !REPORT || !SINGLES) throw new Error('OPSCOPE_JOB_URL / _JOB_REPORT / _SINGLES_URL are not set (run tools/run_browser_tests.sh)');
const report = JSON.parse(fs.readFileSync(REPORT, 'utf8'));
const STRIDE = 1 << 20;

// Waits until the job timeline has fresh data for its current view.
async function fresh(page, since) {
  await page.waitForFunction((n) => window.opscopeJob.fetches > n && !window.opscopeJob.loading(), since, {timeout: 10000});
}

async function view(page, t0, t1) {
  const n = await page.evaluate(() => window.opscopeJob.fetches);
  await page.evaluate(([a, b]) => window.opscopeJob.setRange(a, b), [t0, t1]);
  await fresh(page, n);
}

// Client coordinates of the drawn single event `id` in lane `lane` of the job timeline.
async function rectAt(page, lane, id) {
  return page.evaluate(([l, i]) => {
    const tl = window.opscopeJob.timeline();
    const r = tl.rects.find((x) => x.lane === l && x.item[4] === i && x.item[5] === 1);
    if (!r) return null;
    const b = tl.canvas.getBoundingClientRect();
    return {x: b.left + r.x + Math.min(r.w / 2, 3), y: b.top + r.y + r.h / 2};
  }, [lane, id]);
}

test('the job timeline at a 1 us window on epoch timestamps: 100 ns grid, each outline on its kernel', async () => {
  const page = await openUrl(JOB_URL);
  const job = await page.evaluate(() => window.opscopeJob.state.job);
  assert.equal(typeof job.origin_ns, 'string', 'the job origin is a decimal string');
  assert.ok(BigInt(job.origin_ns) > 1600000000000000000n, `epoch timestamps: ${job.origin_ns}`);
  const top = report.stragglers[0];
  await page.evaluate((k) => window.opscopeJob.selectByKey(k), `${top.worst_group}:${top.worst_seq}`);
  const c = await page.evaluate(() => window.opscopeJob.state.sel);
  for (const m of c.members) {
    const i = job.ranks.findIndex((r) => r.rank === m[0]);
    await view(page, m[4] - 300, m[4] + 700);
    const seen = await page.evaluate(([lane, slice, rank]) => {
      const tl = window.opscopeJob.timeline();
      const bar = tl.rects.find((r) => r.lane === lane && r.item[4] === slice);
      const outline = tl.outlines.find((o) => o.rank === rank);
      return {span: tl.t1 - tl.t0, axis: tl.axisText, ticks: tl.ticks, bar: bar && {x: bar.x, y: bar.y, ts: bar.item[0]}, outline,
              expect: tl.xOf(tl.t0) + 0.3 * tl.trackWidth()};
    }, [i * STRIDE + m[2], m[1], m[0]]);
    assert.equal(seen.span, 1000, `rank ${m[0]}: a 1 us window`);
    assert.equal(seen.axis, '1.000 us shown · grid 100 ns');
    for (let k = 1; k < seen.ticks.length; k++) assert.equal(seen.ticks[k].t - seen.ticks[k - 1].t, 100);
    assert.ok(seen.bar, `rank ${m[0]}: its kernel is drawn`);
    assert.equal(seen.bar.ts, m[4], `rank ${m[0]}: the bar starts at the member's start`);
    assert.ok(Math.abs(seen.bar.x - seen.expect) < 0.01, `rank ${m[0]}: the kernel at its exact pixel: ${JSON.stringify(seen)}`);
    assert.ok(seen.outline && seen.outline.lane, `rank ${m[0]}: outlined in its lane`);
    assert.ok(Math.abs(seen.outline.x0 - seen.bar.x) < 0.01 && seen.outline.y === seen.bar.y,
              `rank ${m[0]}: the outline on its bar: ${JSON.stringify(seen)}`);
  }
  await shot(page, 'job-1us-window');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the job timeline: a kernel selects its collective, skew marks at every zoom, the straggler highlighted', async () => {
  const page = await openUrl(JOB_URL);
  const job = await page.evaluate(() => window.opscopeJob.state.job);
  // The straggler's rank header is highlighted and says so.
  const straggler = report.stragglers.find((s) => s.wait_caused_us > 0).rank;
  const header = await page.evaluate((rank) => {
    const tl = window.opscopeJob.timeline();
    const e = tl.layout.entries.find((x) => x.kind === 'group' && x.path === `rank${rank}`);
    const y = tl.scrollTop() + e.y - tl.scrollY + 10;
    const px = tl.ctx.getImageData(Math.round((tl.width - 40) * tl.dpr), Math.round(y * tl.dpr), 1, 1).data;
    const other = tl.layout.entries.find((x) => x.kind === 'group' && x.path.startsWith('rank') && x.path !== `rank${rank}`);
    const oy = tl.scrollTop() + other.y - tl.scrollY + 10;
    const opx = tl.ctx.getImageData(Math.round((tl.width - 40) * tl.dpr), Math.round(oy * tl.dpr), 1, 1).data;
    return {title: e.group.title, px: [...px].slice(0, 3), other: [...opx].slice(0, 3)};
  }, straggler);
  assert.match(header.title, /straggler/);
  assert.deepEqual(header.px, [247, 201, 201], `the straggler's header is red: ${JSON.stringify(header)}`);
  assert.notDeepEqual(header.other, header.px, 'other ranks are not');

  // Skew marks, one per collective, at least a pixel wide, at the whole job and zoomed in.
  const whole = await page.evaluate(() => window.opscopeJob.timeline().rects.filter((r) => r.lane === -1).length);
  assert.equal(whole, job.collectives.length, 'every collective marked at the whole job');
  const c = job.collectives[1];
  const first = Math.min(...c.members.map((m) => m[4]));
  await view(page, first - 5000, first + 5000);
  const marks = await page.evaluate(() => window.opscopeJob.timeline().rects.filter((r) => r.lane === -1).map((r) => ({w: r.w, id: r.item[4]})));
  assert.ok(marks.some((m) => m.id === 1) && marks.every((m) => m.w >= 1), `zoomed in: ${JSON.stringify(marks)}`);

  // A click on a member's kernel selects its collective.
  const m = c.members.find((x) => x[0] !== straggler);
  const i = job.ranks.findIndex((r) => r.rank === m[0]);
  await view(page, m[4] - 1000, m[5] + 1000);
  const at = await rectAt(page, i * STRIDE + m[2], m[1]);
  assert.ok(at, 'the member kernel is drawn');
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction((k) => (window.opscopeJob.state.sel || {}).seq === k, c.seq);
  assert.equal(await page.evaluate(() => window.opscopeJob.state.sel.group), c.group);
  // ... and its skew mark does too.
  await page.evaluate(() => window.opscopeJob.select(null));
  const mark = await rectAt(page, -1, 1);
  await page.mouse.click(mark.x, mark.y);
  await page.waitForFunction((k) => (window.opscopeJob.state.sel || {}).seq === k, c.seq);
  await shot(page, 'job-kernel-selects');

  // The label is drawn while the collective is on screen, never pinned at the edge once it is not.
  assert.ok(await page.evaluate(() => window.opscopeJob.timeline().collectiveLabel !== null), 'labelled on screen');
  const last = Math.max(...c.members.map((x) => x[4]));
  if (last + 20000 < job.t1) await view(page, last + 10000, job.t1);
  else await view(page, 0, first - 10000);
  assert.equal(await page.evaluate(() => window.opscopeJob.timeline().collectiveLabel), null, 'no label off screen');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the job\'s collectives: sortable, filterable, complete, the summary by name and size, the view in the URL', async () => {
  const page = await openUrl(JOB_URL);
  // The summary: the report's rows.
  const summary = await page.$$eval('#job-summary-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.equal(summary.length, report.collective_summary.length);
  report.collective_summary.forEach((s) => {
    const row = summary.find((r) => r[0] === s.name && Number(r[2]) === s.count);
    assert.ok(row, `${s.name} ${s.bytes} in the summary: ${JSON.stringify(summary)}`);
  });
  assert.match(await page.textContent('#job-coll-count'), new RegExp(`^${report.collectives.length} of ${report.collectives.length} instances`));
  // Sort by seq ascending, then filter to one instance.
  await page.click('#job-collective-table th[data-key="seq"]');
  await page.click('#job-collective-table th[data-key="seq"]');
  const seqs = await page.$$eval('#job-collective-table tbody tr', (trs) => trs.map((tr) => Number(tr.children[1].textContent)));
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), 'ascending by seq');
  const c = report.collectives[report.collectives.length - 1];
  await page.fill('#job-coll-filter', `${c.group}#${c.seq}`);
  const rows = await page.$$eval('#job-collective-table tbody tr', (trs) => trs.map((tr) => tr.dataset.key));
  assert.deepEqual(rows, [`${c.group}:${c.seq}`]);
  assert.match(await page.textContent('#job-coll-count'), new RegExp(`^1 of ${report.collectives.length}`));
  // Selecting from the table keeps it and the zoom in the URL; the URL restores both.
  await page.click(`#job-collective-table tbody tr[data-key="${c.group}:${c.seq}"]`);
  await page.waitForFunction(() => /coll=/.test(location.hash) && /t0=/.test(location.hash));
  await page.keyboard.press('w');  // the keyboard works after a click in the table
  await page.waitForTimeout(300);
  const hash = await page.evaluate(() => location.hash);
  const before = await page.evaluate(() => [window.opscopeJob.timeline().t0, window.opscopeJob.timeline().t1]);
  const again = await openUrl(JOB_URL.replace(/#.*$/, '') + hash);
  const after = await again.evaluate(() => ({sel: window.opscopeJob.state.sel, t: [window.opscopeJob.timeline().t0, window.opscopeJob.timeline().t1]}));
  assert.equal(`${after.sel.group}:${after.sel.seq}`, `${c.group}:${c.seq}`);
  assert.ok(Math.abs(after.t[0] - before[0]) <= 1 && Math.abs(after.t[1] - before[1]) <= 1, `${before} vs ${after.t}`);
  // Drift and offsets never print as "-0.00".
  const drift = await again.evaluate(async () => (await import('/job_timeline.js')).signedFixed(-0.0001, 2));
  assert.equal(drift, '0.00');
  const cells = await again.$$eval('#job-ranks td', (tds) => tds.map((td) => td.textContent));
  assert.ok(cells.every((t) => !/^-0\.0+( us)?$/.test(t)), JSON.stringify(cells));
  assert.deepEqual(page.errors, []);
  assert.deepEqual(again.errors, []);
  await again.close();
  await page.close();
});

test('the job page\'s keyboard: W/S zoom, A/D pan, F focus, 0 the whole job, Esc clears, ? help', async () => {
  const page = await openUrl(JOB_URL);
  const span = () => page.evaluate(() => window.opscopeJob.timeline().t1 - window.opscopeJob.timeline().t0);
  const whole = await span();
  await page.click('#job-host');  // focus on a checkbox: keys still work
  await page.click('#job-host');
  await page.keyboard.press('w');
  assert.ok(await span() < whole * 0.9, 'W zooms in');
  const t0 = await page.evaluate(() => window.opscopeJob.timeline().t0);
  await page.keyboard.press('d');
  assert.ok(await page.evaluate((a) => window.opscopeJob.timeline().t0 > a, t0), 'D pans');
  await page.keyboard.press('0');
  assert.ok(Math.abs(await span() - whole) < whole * 0.05, '0 shows the whole job');
  const top = report.stragglers[0];
  await page.evaluate((k) => window.opscopeJob.selectByKey(k, {zoom: false}), `${top.worst_group}:${top.worst_seq}`);
  await page.keyboard.press('f');
  assert.ok(await span() < whole * 0.5, 'F zooms to the selected collective');
  await page.keyboard.press('Escape');
  assert.equal(await page.evaluate(() => window.opscopeJob.state.sel), null);
  await page.keyboard.press('?');
  await page.waitForSelector('#help .help-card');
  await page.keyboard.press('Escape');
  assert.equal(await page.$eval('#help', (e) => e.hidden), true);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a folder of single traces: the job URL it printed opens the traces one by one, saying why', async () => {
  const page = await openUrl(SINGLES);
  assert.equal(new URL(page.url()).pathname, '/', `the trace view: ${page.url()}`);
  await page.waitForSelector('#message:not([hidden])');
  assert.match(await page.textContent('#message'), /not one job \(.*rank 0 is claimed by two traces/);
  const options = await page.$$eval('#trace-select option', (os) => os.map((o) => o.textContent));
  assert.equal(options.length, 2, JSON.stringify(options));
  await shot(page, 'singles-not-a-job');
  // The job page's /api/job answered 404 (not one job), as it should; nothing else failed.
  assert.deepEqual(page.errors.filter((e) => !/status of 404/.test(e)), []);
  await page.close();
});
