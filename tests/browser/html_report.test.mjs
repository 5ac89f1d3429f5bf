// Browser tests of the self-contained HTML reports (`opscope report|diff|check ... --html`): each
// page opened from a file:// URL in headless Chromium with every network request refused must
// become ready, draw every chart, log no console error, and show a trace's hostile names (markup,
// quotes, "</script>") as text without running them.
// tools/run_report_browser_tests.sh sets OPSCOPE (the binary), CHROMIUM and WORK (a scratch folder).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import {chromium} from 'playwright-core';

const OPSCOPE = process.env.OPSCOPE;
const WORK = process.env.WORK;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
if (!OPSCOPE || !WORK) throw new Error('OPSCOPE and WORK must be set (run tools/run_report_browser_tests.sh)');

const HOSTILE = ['<script>window.__pwned=1</script>', '"quoted" & \'single\' <b>bold</b>', '</script><img src=x onerror="window.__pwned=2">'];

// A CUDA-style trace whose op and kernel names are HOSTILE (two steps, one launch per name).
function hostileTrace(dst) {
  const ev = [{ph: 'M', name: 'process_name', pid: 1, args: {name: '<i>proc</i>'}}];
  let corr = 1;
  for (let step = 0; step < 2; step++) {
    const t0 = 1000 + step * 1000;
    ev.push({ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${step + 1}`, pid: 1, tid: 1, ts: t0, dur: 900});
    HOSTILE.forEach((name, i) => {
      const c = corr++;
      const ts = t0 + 10 + 200 * i;
      ev.push({ph: 'X', cat: 'cpu_op', name, pid: 1, tid: 1, ts, dur: 30, args: {'External id': c}});
      ev.push({ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: ts + 5, dur: 8, args: {correlation: c, 'External id': c}});
      ev.push({ph: 'X', cat: 'kernel', name: `k ${name}`, pid: 0, tid: 7, ts: ts + 20, dur: 50 + 10 * i, args: {correlation: c, 'External id': c, device: 0, stream: 7}});
    });
  }
  fs.writeFileSync(dst, JSON.stringify({schemaVersion: 1, traceEvents: ev}));
}

function opscope(args, okCodes = [0]) {
  const r = spawnSync(OPSCOPE, args, {encoding: 'utf8'});
  assert.ok(okCodes.includes(r.status), `opscope ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return r;
}

function findTrace(dir, variant) {
  for (const e of fs.readdirSync(dir, {recursive: true})) {
    if (e.endsWith(path.join(variant, 'trace.json'))) return path.join(dir, e);
  }
  throw new Error(`no ${variant}/trace.json under ${dir}`);
}

const pages = {};
let browser;

before(async () => {
  fs.mkdirSync(WORK, {recursive: true});
  opscope(['demo', 'rmsnorm', '--iters', '4', '--out', path.join(WORK, 'base')]);
  fs.writeFileSync(path.join(WORK, 'slow.cfg'), 'exec_launch_us = 300\nvector_ghz = 0.5\n');
  opscope(['demo', 'rmsnorm', '--iters', '4', '--out', path.join(WORK, 'slow'), '--device-config', path.join(WORK, 'slow.cfg')]);
  opscope(['demo', 'allreduce', '--ranks', '4', '--steps', '6', '--straggler', '2', '--delay-us', '300', '--out', path.join(WORK, 'job')]);
  opscope(['demo', 'allreduce', '--ranks', '4', '--steps', '6', '--out', path.join(WORK, 'job_even')]);
  const base = findTrace(path.join(WORK, 'base'), 'naive');
  const slow = findTrace(path.join(WORK, 'slow'), 'naive');
  const hostile = path.join(WORK, 'hostile.json');
  hostileTrace(hostile);
  const out = (n) => (pages[n] = path.join(WORK, `${n}.html`));
  opscope(['report', base, '--memory', '--html', out('trace')]);
  opscope(['report', path.join(WORK, 'job'), '--html', out('job')]);
  opscope(['diff', base, slow, '--html', out('diff')]);
  opscope(['check', base, slow, '--html', out('check')], [1]);
  opscope(['report', hostile, '--html', out('hostile')]);
  // A real CUDA trace (ops with shapes and dtypes: roofline points; memory events: the curve).
  if (process.env.FIXTURE_TRACE) opscope(['report', process.env.FIXTURE_TRACE, '--quiet', '--html', out('fixture')]);
  // A job check: per-step figures on both sides (the rank test), the job diff's rows.
  opscope(['check', path.join(WORK, 'job_even'), path.join(WORK, 'job'), '--html', out('job_check')], [1]);
  opscope(['diff', path.join(WORK, 'job_even'), path.join(WORK, 'job'), '--html', out('job_diff')]);
  browser = await chromium.launch({executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update']});
});

after(async () => {
  if (browser) await browser.close();
});

// Opens a report offline from disk: returns the page, its errors and every request it tried.
async function open(file) {
  const context = await browser.newContext({offline: true});
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file://')) return route.continue();
    requests.push(url);
    return route.abort();
  });
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('body[data-ready="1"], body[data-ready="error"]', {timeout: 20000});
  assert.equal(await page.getAttribute('body', 'data-ready'), '1', `${file}: ${errors.join('\n')}`);
  return {page, context, errors, requests};
}

async function expectChartsDrawn(name, kinds) {
  const {page, context, errors, requests} = await open(pages[name]);
  const charts = await page.$$eval('figure.chart', (fs) => fs.map((f) => ({name: f.dataset.chart, drawn: f.dataset.drawn, marks: Number(f.dataset.marks || 0)})));
  assert.ok(charts.length > 0, `${name}: no chart`);
  for (const c of charts) {
    assert.equal(c.drawn, '1', `${name}: chart ${c.name} not drawn`);
  }
  for (const k of kinds) {
    assert.ok(charts.some((c) => c.name.startsWith(k) && c.marks > 0), `${name}: no ${k} chart with marks among ${JSON.stringify(charts)}`);
  }
  assert.ok(await page.$$eval('table', (t) => t.length) > 0, `${name}: no table`);
  assert.deepEqual(errors, [], `${name}: console errors`);
  assert.deepEqual(requests, [], `${name}: requests left the file`);
  await page.screenshot({path: path.join(WORK, `${name}.png`), fullPage: true});
  await context.close();
  return charts;
}

test('trace report: every chart drawn offline', async () => {
  await expectChartsDrawn('trace', []);
});

test('job report: every chart drawn offline', async () => {
  await expectChartsDrawn('job', []);
});

test('diff report: every chart drawn offline', async () => {
  await expectChartsDrawn('diff', []);
});

test('check report: the verdict and its charts', async () => {
  await expectChartsDrawn('check', []);
  const {page, context} = await open(pages.check);
  assert.equal(await page.getAttribute('[data-verdict]', 'data-verdict'), 'regression');
  await context.close();
});

test('a real trace: the overview, roofline and memory charts have marks', {skip: !process.env.FIXTURE_TRACE && 'FIXTURE_TRACE not set'}, async () => {
  await expectChartsDrawn('fixture', ['overview', 'roofline', 'memory-']);
});

test('job check and job diff reports: every chart drawn offline', async () => {
  await expectChartsDrawn('job_check', []);
  await expectChartsDrawn('job_diff', []);
});

test('a Neuron trace\'s report has the NeuronCore section of report --json; a CUDA one has none', async () => {
  const nd = JSON.parse(opscope(['report', findTrace(path.join(WORK, 'base'), 'naive'), '--json']).stdout).neuron_device;
  assert.ok(nd && nd.engines.length > 0, 'the demo trace has neuron_device figures');
  const {page, context, errors} = await open(pages.trace);
  assert.ok(await page.$('section#neuron'), 'the NeuronCore section');
  const rows = await page.$$eval('[data-table="neuron_engines"] tbody tr', (trs) => trs.map((r) => [...r.children].map((td) => td.textContent)));
  assert.equal(rows.length, nd.engines.length);
  for (const e of nd.engines) {
    assert.ok(rows.some((r) => r[0] === e.device && r[1] === e.engine && r[2] === String(e.instructions)),
              `engine ${e.engine}: ${JSON.stringify(rows)}`);
  }
  const opcodes = await page.$$eval('[data-table="neuron_opcodes"] tbody tr', (trs) => trs.map((r) => r.children[0].textContent));
  for (const o of nd.opcodes) assert.ok(opcodes.includes(o.opcode), `opcode ${o.opcode}`);
  const chart = await page.$eval('figure.chart[data-chart="neuron-engines"]', (f) => ({drawn: f.dataset.drawn, marks: Number(f.dataset.marks || 0)}));
  assert.deepEqual(chart, {drawn: '1', marks: nd.engines.filter((e) => e.utilization > 0).length});
  assert.ok((await page.textContent('[data-neuron="dma"]')).includes(`${nd.dma.packets} packets on ${nd.dma.queues} queues`));
  assert.deepEqual(errors, []);
  await context.close();
  const cuda = await open(pages.hostile);
  assert.equal(await cuda.page.$('section#neuron'), null);
  await cuda.context.close();
});

test('hostile names render as text and never run', async () => {
  const {page, context, errors} = await open(pages.hostile);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  const text = await page.evaluate(() => document.body.innerText);
  for (const name of HOSTILE) assert.ok(text.includes(name), `the name ${name} is shown as text`);
  // Only the report's own two script elements exist, and no image came from a name.
  assert.equal(await page.$$eval('script', (s) => s.length), 2);
  assert.equal(await page.$$eval('img', (s) => s.length), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the report is one file: no src or href leaves it', async () => {
  const html = fs.readFileSync(pages.trace, 'utf8');
  assert.ok(!/\s(src|href)=["']?(https?:)?\/\//i.test(html), 'no external URL in an attribute');
  assert.ok(html.includes("default-src 'none'"), 'the CSP forbids requests');
});
