// The job page (`opscope explore DIR` on a folder of rank traces) against `opscope report DIR
// --json` on the same folder: the stragglers, ranks, collectives, a collective's per-rank sync
// wait, the ranks x steps heatmap of per-step wait and the findings show the report's numbers; and
// a collective's kernel opens in its rank's own timeline. tools/run_browser_tests.sh generates the
// job (`opscope demo allreduce` with a straggler), writes the report to OPSCOPE_JOB_REPORT and
// serves the folder at OPSCOPE_JOB_URL.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {browserContext, openUrl, ready, shot, watchErrors} from './harness.mjs';

const JOB_URL = process.env.OPSCOPE_JOB_URL;
const REPORT = process.env.OPSCOPE_JOB_REPORT;
if (!JOB_URL || !REPORT) throw new Error('OPSCOPE_JOB_URL / OPSCOPE_JOB_REPORT are not set (run tools/run_browser_tests.sh)');
const report = JSON.parse(fs.readFileSync(REPORT, 'utf8'));

// A duration as the page prints it ("12 ns", "1.234 us", "5.000 ms", "1.000 s") in ns, with the
// half unit of its last digit the printing may have rounded away.
const UNIT = {ns: 1, us: 1e3, ms: 1e6, s: 1e9};
function parseDuration(text) {
  const m = /^(-?\d+(?:\.(\d+))?) (ns|us|ms|s)$/.exec(text.trim());
  assert.ok(m, `a duration: '${text}'`);
  const unit = UNIT[m[3]];
  return {ns: Number(m[1]) * unit, tol: 0.5 * unit * 10 ** -(m[2] ? m[2].length : 0) + 1e-6};
}
function assertDuration(text, expectedNs, what) {
  const d = parseDuration(text);
  assert.ok(Math.abs(d.ns - expectedNs) <= d.tol, `${what}: page '${text}', report ${expectedNs} ns`);
}

// The cells of a table under `selector`, row by row, without its header row.
async function tableCells(page, selector) {
  return page.$$eval(`${selector} table tr`, (rows) => rows.slice(1).map((tr) => [...tr.children].map((c) => c.textContent)));
}

const keyOf = (c) => `${c.group}:${c.seq}`;

test('the job page shows the report\'s stragglers, ranks, collectives, per-step wait and findings', async () => {
  assert.ok(report.ranks.length >= 3 && report.stragglers.length > 0 && report.step_numbers.length > 0,
            'the generated job has ranks, stragglers and steps');
  const page = await openUrl(JOB_URL);
  await shot(page, 'job-first-paint');

  // Stragglers, in the report's order.
  const stragglers = await tableCells(page, '#job-stragglers');
  assert.equal(stragglers.length, report.stragglers.length);
  report.stragglers.forEach((s, i) => {
    const [rank, timesLast, wait, worst] = stragglers[i];
    assert.equal(rank, `rank ${s.rank}`);
    assert.equal(Number(timesLast), s.times_last);
    assertDuration(wait, s.wait_caused_us * 1e3, `rank ${s.rank}'s wait caused`);
    assert.equal(worst, s.worst_seq >= 0 ? `${s.worst_group}#${s.worst_seq}` : '-');
  });

  // Ranks: clock offset and timeline.
  const ranks = await tableCells(page, '#job-ranks');
  assert.equal(ranks.length, report.ranks.length);
  report.ranks.forEach((r, i) => {
    const [rank, offset, , busy, computation, exposed, overlap, file] = ranks[i];
    assert.equal(rank, `rank ${r.rank}`);
    assert.ok(Math.abs(Number(offset.replace(' us', '')) - r.clock_offset_us) <= 0.0005 + 1e-9, `rank ${r.rank}'s clock offset`);
    assertDuration(busy, r.busy_us * 1e3, `rank ${r.rank}'s busy`);
    assertDuration(computation, r.computation_us * 1e3, `rank ${r.rank}'s computation`);
    assertDuration(exposed, r.exposed_communication_us * 1e3, `rank ${r.rank}'s exposed communication`);
    assert.equal(overlap, r.overlap_pct === null ? '-' : r.overlap_pct.toFixed(2));
    assert.equal(file, r.file);
  });

  // Every collective instance: skew, transfer, bus bandwidth, last rank.
  const byKey = new Map(report.collectives.map((c) => [keyOf(c), c]));
  const collectives = await tableCells(page, '#job-collectives');
  assert.equal(collectives.length, report.collectives.length);
  for (const [group, seq, name, , members, skew, transfer, busbw, last] of collectives) {
    const c = byKey.get(`${group}:${seq}`);
    assert.ok(c, `${group}#${seq} is in the report`);
    assert.equal(name, c.name);
    assert.equal(Number(members), c.ranks.length);
    assertDuration(skew, c.skew_us * 1e3, `${group}#${seq} skew`);
    assertDuration(transfer, c.transfer_us * 1e3, `${group}#${seq} transfer`);
    assert.equal(busbw, c.busbw_gbps === null ? '-' : c.busbw_gbps.toFixed(2));
    assert.equal(last, c.last_rank === null ? '-' : String(c.last_rank));
  }

  // Ranks x steps: each cell is that rank's wait in that step, the legend spans 0 to the largest.
  const cells = await page.$$eval('#job-heatmap td[data-rank]', (tds) => tds.map((td) => ({
    rank: Number(td.dataset.rank), step: Number(td.dataset.step), wait: Number(td.dataset.waitNs), title: td.title,
    color: getComputedStyle(td).backgroundColor})));
  let expectedCells = 0;
  let max = 0;
  for (const row of report.step_wait) {
    row.wait_us.forEach((us, j) => {
      if (us === null) return;
      expectedCells += 1;
      max = Math.max(max, us * 1e3);
      const cell = cells.find((x) => x.rank === row.rank && x.step === report.step_numbers[j]);
      assert.ok(cell, `a cell for rank ${row.rank}, step ${report.step_numbers[j]}`);
      assert.ok(Math.abs(cell.wait - us * 1e3) <= 0.5, `rank ${row.rank}, step ${report.step_numbers[j]}: page ${cell.wait} ns, report ${us} us`);
      assertDuration(/waited (.*) at collectives/.exec(cell.title)[1], us * 1e3, 'the cell\'s title');
    });
  }
  assert.equal(cells.length, expectedCells);
  assert.ok(max > 0, 'some rank waited');
  const legend = await page.$eval('#job-heat-legend', (e) => ({max: Number(e.dataset.maxNs), ticks: [...e.querySelectorAll('.heat-ticks span')].map((s) => s.textContent)}));
  assert.equal(legend.max, max);
  assertDuration(legend.ticks.at(-1), max, 'the legend\'s top');
  assert.equal(legend.ticks[0], '0 ns');
  // The longest wait is the darkest cell, a cell that did not wait the lightest.
  const lightness = (rgb) => rgb.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b);
  const darkest = cells.reduce((a, b) => (lightness(b.color) < lightness(a.color) ? b : a));
  assert.equal(darkest.wait, max);

  // Findings: the report's sentences.
  const findings = await page.$$eval('#job-findings li', (lis) => lis.map((li) => li.textContent));
  for (const f of report.findings) assert.ok(findings.includes(f), `finding shown: ${f}`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the straggler finding selects where it made the others wait; a member opens in its rank\'s timeline', async () => {
  const page = await openUrl(JOB_URL);
  const top = report.stragglers[0];
  await page.click('#job-straggler-link');
  const sel = await page.evaluate(() => window.opscopeJob.state.sel);
  assert.equal(keyOf(sel), `${top.worst_group}:${top.worst_seq}`);
  await page.waitForFunction((k) => new URLSearchParams(location.hash.slice(1)).get('coll') === k, keyOf(sel));
  await ready(page);
  await shot(page, 'job-straggler-selected');

  // Each rank's sync wait at that instance, as the report has it.
  const c = report.collectives.find((x) => keyOf(x) === keyOf(sel));
  const rows = await tableCells(page, '#job-selected');
  assert.equal(rows.length, c.ranks.length);
  c.ranks.forEach((rank, i) => {
    const row = rows.find((r) => r[0] === `rank ${rank}`);
    assert.ok(row, `rank ${rank} is listed`);
    assertDuration(row[2], c.wait_us[i] * 1e3, `rank ${rank}'s sync wait at ${keyOf(c)}`);
  });
  const caused = c.wait_us.reduce((a, b) => a + b, 0);  // the last rank itself waits 0
  assert.ok(Math.abs(caused - top.worst_wait_us) < 1e-3, `the others waited ${caused} us there, as the report says`);

  // The straggler's own kernel, in its own trace: the Explorer opens at it, selected.
  const job = await page.evaluate(() => window.opscopeJob.state.job);
  const member = sel.members.find((m) => m[0] === top.rank);
  const rank = job.ranks.find((r) => r.rank === top.rank);
  assert.ok(member[1] >= 0, 'the kernel is in the served trace');
  const [popup] = await Promise.all([
    browserContext().waitForEvent('page'),
    page.click(`#job-selected tr:has(td:text-is("rank ${top.rank}")) a`),
  ]);
  watchErrors(popup);
  await ready(popup);
  await popup.waitForFunction(() => window.opscopeApp.timeline().rects.length > 0, null, {timeout: 10000});
  const opened = await popup.evaluate(() => ({trace: window.opscopeApp.state.trace, sel: window.opscopeApp.state.sel}));
  assert.deepEqual(opened, {trace: rank.trace, sel: member[1]});
  const info = await popup.evaluate(async () => (await fetch('/api/info')).json());
  const served = info.traces[rank.trace];
  assert.ok(served && (served.source || served.name) && rank.file.endsWith(served.name),
            `trace ${rank.trace} is rank ${top.rank}'s file: ${JSON.stringify(served)} vs ${rank.file}`);
  await shot(popup, 'job-rank-timeline');
  assert.deepEqual(popup.errors, []);
  assert.deepEqual(page.errors, []);
  await popup.close();
  await page.close();
});
