// Names that stay apart and search that finds what is pasted, on the folder of single traces
// (OPSCOPE_SINGLES_URL: an epoch copy of a small CUDA fixture and a trace of look-alike names made
// by tests/browser/make_traces.mjs): two cutlass GEMMs differing only in their template argument
// keep it, "<built-in function launch>" and names without templates stay whole, full names on
// hover; a name pasted from the details panel is found as text, the regex toggle and the kind
// filter narrow it, matches sort by duration (the slowest instance in one click), the URL keeps
// the mode, and an earlier error leaves the status line.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {SINGLES_BASE, openUrl, shot, singlesApi, singlesTrace} from './harness.mjs';

const GEMM_A = 'void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_16x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x256_16x3_nn_align4::Params)';
const GEMM_B = 'void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4::Params)';
const SOFTMAX = 'void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)';
const DTOH = 'Memcpy DtoH (Device -> Pageable)';
const LAUNCH = '<built-in function launch>';
const SOFTMAX_US = [3, 9, 4, 12, 6];

async function opTableNames(page) {
  await page.waitForSelector('#op-table tbody tr');
  return page.$$eval('#op-table tbody td.name-cell', (tds) => tds.map((td) => ({text: td.textContent, title: td.title, name: td.parentElement.dataset.name})));
}

test('short names stay apart: template arguments kept where they differ, names without templates whole', async () => {
  const names = await singlesTrace('names');
  const page = await openUrl(`${SINGLES_BASE}#trace=${names}&tab=ops`);
  const cells = await opTableNames(page);
  const a = cells.find((c) => c.name === GEMM_A);
  const b = cells.find((c) => c.name === GEMM_B);
  assert.ok(a && b, `both GEMMs are rows: ${JSON.stringify(cells)}`);
  assert.notEqual(a.text, b.text, 'the two GEMMs do not look alike');
  assert.ok(a.text.includes('128x256') && b.text.includes('64x64'), `${a.text} / ${b.text}`);
  assert.equal(a.title, GEMM_A, 'the full name on hover');
  const softmax = cells.find((c) => c.name === SOFTMAX);
  assert.equal(softmax.text, 'at::native::(anonymous namespace)::cunn_SoftMaxForward<…>(…)');
  const texts = cells.map((c) => c.text);
  assert.equal(new Set(texts).size, texts.length, `no two rows alike: ${texts}`);
  for (const c of cells) if (!/\w</.test(c.name)) assert.equal(c.text, c.name, 'a name without a template is never shortened');
  // The epoch copy of the fixture: two fft kernels that differ in a template argument.
  const epoch = await singlesTrace('epoch');
  await page.evaluate((t) => (location.hash = `#trace=${t}&tab=ops`), epoch);
  await page.waitForFunction((t) => window.opscopeApp.state.trace === t, epoch);
  const fft = (await opTableNames(page)).filter((c) => c.name.includes('fft2d_r2c_32x32'));
  assert.ok(fft.length >= 2, JSON.stringify(fft));
  assert.equal(new Set(fft.map((c) => c.text)).size, fft.length, `fft rows apart: ${fft.map((c) => c.text)}`);
  // The chain of a GEMM: the built-in Python frame keeps its name, the GEMM its argument.
  const k = (await singlesApi(`/api/trace/${names}/search?q=${encodeURIComponent(GEMM_A)}&exact=1&limit=1`)).events[0];
  await page.evaluate((t) => (location.hash = `#trace=${t}&tab=details`), names);
  await page.waitForFunction((t) => window.opscopeApp.state.trace === t, names);
  await page.evaluate((id) => window.opscopeApp.select(id), k.id);
  await page.waitForSelector('#chain');
  const buttons = await page.$$eval('#details .event-link', (bs) => bs.map((b) => ({text: b.firstChild.nextSibling.textContent, name: b.dataset.name})));
  const launch = buttons.find((x) => x.name === LAUNCH);
  assert.ok(launch, `the built-in frame is listed: ${JSON.stringify(buttons.map((x) => x.name))}`);
  assert.equal(launch.text, LAUNCH);
  assert.equal(await page.$eval('#details h3', (h) => h.textContent), GEMM_A, 'the details show the full name');
  await shot(page, 'names-apart');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('search finds pasted names as text, a regex toggle and a kind filter narrow it, the slowest in one click', async () => {
  const names = await singlesTrace('names');
  const page = await openUrl(`${SINGLES_BASE}#trace=${names}&tab=details`);
  // An error first: a bad regular expression says so in the status line ...
  await page.click('#search-regex');
  await page.fill('#search', 'cunn_(');
  await page.press('#search', 'Enter');
  await page.waitForFunction(() => /bad regular expression/.test(document.getElementById('status').textContent));
  await page.click('#search-regex');
  // ... then a name pasted as it is shown in the details panel: found as text, the error gone.
  for (const [q, n] of [[SOFTMAX, SOFTMAX_US.length], [DTOH, 1], [LAUNCH, 1]]) {
    await page.fill('#search', q);
    await page.press('#search', 'Enter');
    await page.waitForFunction((want) => document.getElementById('search-count').textContent === `1 / ${want}`, n, {timeout: 5000});
    assert.doesNotMatch(await page.textContent('#status'), /bad regular expression/);
  }
  // A part of a name is found too; the kind filter keeps the kernels and leaves the ops out.
  await page.fill('#search', 'cunn_SoftMax');
  await page.press('#search', 'Enter');
  await page.waitForFunction((want) => document.getElementById('search-count').textContent === `1 / ${want}`, SOFTMAX_US.length);
  await page.selectOption('#search-kind', 'ops');
  await page.waitForFunction(() => document.getElementById('search-count').textContent === 'no match');
  await page.selectOption('#search-kind', 'kernels');
  await page.waitForFunction((want) => document.getElementById('search-count').textContent === `1 / ${want}`, SOFTMAX_US.length);
  // Longest first: one click on "duration" selects the slowest instance.
  await page.click('#search-results th[data-sort="dur"]');
  await page.waitForFunction((us) => {
    const s = window.opscopeApp.state.slice;
    return s && s.dur === us * 1000 && document.querySelector('#search-results tr.current td:nth-child(5)');
  }, Math.max(...SOFTMAX_US), {timeout: 5000});
  const durs = await page.$$eval('#search-results tbody tr[data-index], #search-results tr[data-index]', (trs) => trs.map((tr) => tr.children[4].textContent));
  assert.deepEqual(durs, [...SOFTMAX_US].sort((a, b) => b - a).map((us) => `${us.toFixed(3)} us`));
  // The regex toggle: "^aten::(mm|_softmax)$" matches ops only as a regular expression.
  await page.selectOption('#search-kind', 'all');
  await page.click('#search-regex');
  await page.fill('#search', '^aten::(mm|_softmax)$');
  await page.press('#search', 'Enter');
  await page.waitForFunction(() => /^1 \/ 7$/.test(document.getElementById('search-count').textContent));
  await page.waitForTimeout(250);
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /re=1/);
  assert.match(hash, /qs=dur/);
  // The URL restores the mode.
  const again = await openUrl(`${SINGLES_BASE}${hash}`);
  assert.equal(await again.$eval('#search-regex', (b) => b.getAttribute('aria-pressed')), 'true');
  assert.equal(await again.evaluate(() => window.opscopeApp.searcher().total), 7);
  await shot(page, 'search-text-kind-duration');
  assert.deepEqual(page.errors.filter((e) => !/status of 400/.test(e)), []);
  assert.deepEqual(again.errors, []);
  await again.close();
  await page.close();
});
