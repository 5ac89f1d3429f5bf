// Shared setup of the Explorer's browser tests: one headless Chromium (driven by playwright-core)
// for all of them, pages opened at a URL hash, screenshots, and the API.
// tools/run_browser_tests.sh starts `opscope explore` on the demo profile and fixture traces and
// sets OPSCOPE_URL, CHROMIUM and ARTIFACTS.
import {before, after} from 'node:test';
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

let context;
let userDataDir;
// Trace indices: the eager Neuron demo trace (aten::mul etc.), the compiled one, a small CUDA
// fixture and a real CUDA trace with deep Python stacks.
export const T = {info: null, neuron: -1, compiled: -1, cuda: -1, deep: -1};

export async function api(p) {
  const res = await fetch(new URL(p, BASE));
  assert.equal(res.status, 200, `${p}: HTTP ${res.status}`);
  return res.json();
}

// The server of a folder of single traces (OPSCOPE_SINGLES_URL: the job page URL it printed), its
// API, and the index of its trace whose file name starts with `prefix`.
export const SINGLES_BASE = process.env.OPSCOPE_SINGLES_URL ? new URL('/', process.env.OPSCOPE_SINGLES_URL).toString() : null;

export async function singlesApi(p) {
  const res = await fetch(new URL(p, SINGLES_BASE));
  assert.equal(res.status, 200, `${p}: HTTP ${res.status}`);
  return res.json();
}

export async function singlesTrace(prefix) {
  const info = await singlesApi('/api/info');
  const t = info.traces.find((x) => x.name.split('/').pop().startsWith(prefix));
  assert.ok(t, `${prefix} is served: ${JSON.stringify(info.traces)}`);
  return t.index;
}

// The browser context (for pages a link opens in a new tab).
export const browserContext = () => context;

// Collects a page's script errors and console errors into page.errors.
export function watchErrors(page) {
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') page.errors.push(m.text());
  });
  return page;
}

// Waits until a page (the Explorer or the job page) says it is ready; fails if it says 'error'.
export async function ready(page) {
  await page.waitForFunction(() => document.body.dataset.ready === '1' || document.body.dataset.ready === 'error',
                             null, {timeout: 20000});
  assert.equal(await page.evaluate(() => document.body.dataset.ready), '1', `page failed: ${page.errors.join('; ')}`);
}

// Opens an absolute URL (another server's, such as the job page's) and waits until it is ready.
export async function openUrl(url, {width = 1500, height = 950} = {}) {
  const page = watchErrors(await context.newPage());
  await page.setViewportSize({width, height});
  await page.goto(url);
  await ready(page);
  return page;
}

export async function openPage(hash, {width = 1500, height = 950} = {}) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.setViewportSize({width, height});
  await page.goto(new URL('/#' + hash, BASE).toString());
  await page.waitForFunction(() => document.body.dataset.ready === '1' || document.body.dataset.ready === 'error',
                             null, {timeout: 20000});
  assert.equal(await page.evaluate(() => document.body.dataset.ready), '1', `app failed: ${errors.join('; ')}`);
  page.errors = errors;
  return page;
}

export async function shot(page, name) {
  await page.screenshot({path: path.join(ARTIFACTS, name + '.png')});
}

// Waits until the main timeline has drawn data for the current view.
export async function drawn(page, tl = 'timeline') {
  await page.waitForFunction((t) => window.opscopeApp[t]().rects.length > 0, tl, {timeout: 10000});
}

export async function canvasBox(page, selector = '#timeline') {
  return page.$eval(selector, (c) => {
    const b = c.getBoundingClientRect();
    return {x: b.left, y: b.top, w: b.width, h: b.height};
  });
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
  // The servers print their address before their traces are loaded: wait until they are.
  for (let i = 0; i < 600 && !(await api('/api/status')).ready; ++i) await new Promise((r) => setTimeout(r, 100));
  T.info = await api('/api/info');
  for (const t of T.info.traces) {
    if (t.device_type === 'NEURON') {
      const mul = await api(`/api/trace/${t.index}/search?regex=1&q=${encodeURIComponent('^aten::mul$')}&limit=1`);
      const region = await api(`/api/trace/${t.index}/search?q=${encodeURIComponent('Torch-Compiled Region')}&limit=1`);
      if (mul.total > 0 && T.neuron < 0) T.neuron = t.index;
      if (region.total > 0 && T.compiled < 0) T.compiled = t.index;
    }
  }
  T.cuda = T.info.traces.findIndex((t) => t.name.startsWith('benchmark_result'));
  T.deep = T.info.traces.findIndex((t) => t.name.startsWith('Qwen'));
  assert.ok(T.neuron >= 0 && T.compiled >= 0, `the demo's Neuron traces are open: ${JSON.stringify(T.info.traces)}`);
  assert.ok(T.cuda >= 0 && T.deep >= 0, `the CUDA fixtures are open: ${JSON.stringify(T.info.traces)}`);
});

after(async () => {
  if (context) await context.close();
  fs.rmSync(userDataDir, {recursive: true, force: true});
});
