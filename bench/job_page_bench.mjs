// The job page as a user meets it, in headless Chromium: the time from starting `opscope explore
// DIR` to the job page's first full view (every rank's lanes drawn), and how long a zoom, a pan
// and a click on a collective take to fresh data once it is up (then a zoom and a pan in the trace
// view of rank 0, dispatched in the page and timed there); for this build and a baseline
// build, interleaved round by round (a run can only be slowed by other work: the best of each is
// kept, the median printed beside it).
//
//   node bench/job_page_bench.mjs --new build/opscope --old OLD/opscope [--ranks 8] [--steps 10]
//        [--collectives 202] [--kernels 800] [--repeat 3] [--dir DIR] [--keep]
//
// The job is generated (unless --dir): `--ranks` rank traces at epoch timestamps (~1.67e18 ns,
// with sub-microsecond parts, as torch.profiler writes them), each `--steps` steps of `--kernels`
// compute kernels (op -> cudaLaunchKernel -> kernel) and `--collectives` NCCL collectives in two
// process groups of three sizes; rank 5 computes 10% longer (the straggler) and every rank's
// clock is offset by up to +-2 ms. Defaults: 8 ranks x 2,020 collectives, ~5 MB (24,250 events) a rank.
// Target (issue 34): first view under 2 s, interactions under 100 ms to fresh data.
// Besides wall times it prints where the first view went (until the server had made the job, then
// the page), the KB the page read from the job's API, and the CPU seconds the server and Chromium
// spent (first view; each interaction): on a shared machine the CPU figures vary far less than
// the wall times, which grow with everyone else's load.
//
// Figures, 2-core machine shared with other builds (load average 10-13), this build against the
// one before the job page's request changes (best / median of 5, interleaved, same run):
//                 first view s  job made s  page s       KB     zoom ms    pan ms    select ms  CPU ms each
//   this build     2.94 / 4.06  1.83 / 2.36  0.82 / 1.04  1444  195 / 226   67 / 173  43 / 55    107 / 183
//   baseline       3.71 / 4.19  1.90 / 2.86  0.34 / 1.20  2431  250 / 278  187 / 295  89 / 113   157 / 187
// (the baseline read 1672 KB when its second, identical viewport request did not go out). Runs at
// load 13-19 gave medians zoom 417 against 392 ms and 330 against 480 ms, pan 256 against 245 ms
// and 244 against 478 ms: wall times vary more between runs than between the builds. At these
// loads the first view is mostly the server's import (the job made at 2-4 s, the same in both
// builds), and neither build meets the targets; the page reads 41% fewer bytes.
//
// On a quieter VM (load average 0.9 at the start, 3.5 at the end), this build against the one
// before the bar layer, the huge-page restart of `explore` and the microtask request:
//                 first view s  job made s  page s       KB     zoom ms    pan ms    select ms  CPU ms each
//   this build     1.56 / 1.65  0.42 / 0.57  0.61 / 1.22  1444   64 / 105   47 / 75   38 / 45    113 / 190
//   baseline       1.57 / 1.87  0.55 / 0.84  0.69 / 0.79  1444   80 / 86    66 / 98   35 / 37    103 / 157
// (trace view zoom 38 / 40 against 47 / 65 ms). A second run (load 0.4 -> 2.6): first view
// 1.71 / 1.84 against 1.55 / 1.81 s, zoom 58 / 83 against 66 / 79 ms, pan 40 / 49 against 58 /
// 92 ms, select 31 / 39 against 27 / 34 ms. The server made the job at 0.30-1.73 s in one build's
// rounds: a first view moves more between rounds than between the builds, and so do
// interactions (64 to 176 ms in either build); every median of the first view stayed under 2 s.
// With the flat viewports and the compact /api/job too (load 0.5 -> 2.8), against the same
// baseline: first view 1.28 / 1.74 against 1.44 / 1.75 s, job made 0.32 / 0.51 against 0.51 /
// 0.72 s, 1280 against 1444 KB, zoom 63 / 80 against 62 / 85 ms, pan 40 / 57 against 57 / 74 ms,
// select 25 / 49 against 17 / 22 ms (in the page alone, eight selections each: 17-66 against
// 20-115 ms). The flat viewports alone, right after a CI run (load 1.7 -> 3.9): first view 1.63 /
// 2.01 against 1.70 / 2.09 s, zoom 50 / 62 against 77 / 119 ms.
import {createRequire} from 'node:module';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(HERE, '../tests/browser/package.json'));
const {chromium} = require('playwright-core');

function args() {
  const a = {ranks: 8, steps: 10, collectives: 202, kernels: 800, repeat: 3, keep: false, dir: null, new: null, old: null};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    if (k === 'keep') a.keep = true;
    else if (k in a) a[k] = ['dir', 'new', 'old'].includes(k) ? argv[++i] : Number(argv[++i]);
    else throw new Error(`unknown option ${argv[i]}`);
  }
  if (!a.new) throw new Error('usage: node bench/job_page_bench.mjs --new BIN [--old BIN] [--ranks N] ...');
  return a;
}

// ---- the generated job ------------------------------------------------------------------------

const US = (ns) => `${ns / 1000n}.${String(ns % 1000n).padStart(3, '0')}`;
const SIZES = [1048576n, 16777216n, 67108864n];  // elements (float): 4 MB, 64 MB, 256 MB messages

// Every rank's trace, generated in lockstep: a collective ends on every rank when the last rank
// has arrived (on the common clock) plus the transfer, as NCCL's kernels do.
function rankTraces(o) {
  let seed = 1;
  const rnd = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return BigInt(seed % n);
  };
  const ranks = [...Array(o.ranks).keys()].map((rank) => ({
    rank, pid: 1000 + rank, out: [], ext: 1n,
    offset: BigInt(rank * 450_000) - 1_800_000n,  // its clock: up to +-2 ms off the common one
    slow: rank === 5 ? 11n : 10n,                 // rank 5 computes 10% longer
    t: 1670000000000000357n,                      // on the common clock, a sub-us part
  }));
  const ev = (r, cat, name, tid, ts, dur, args) => r.out.push(
      `{"ph":"X","cat":"${cat}","name":"${name}","pid":${tid === 7 || tid >= 20 ? 0 : r.pid},"tid":${tid},` +
      `"ts":${US(ts + r.offset)},"dur":${US(dur)},"args":{${args}}}`);
  const seqs = [0, 0];
  const per = Math.max(1, Math.floor(o.kernels / o.collectives));
  for (let step = 0; step < o.steps; step++) {
    const marks = ranks.map((r) => [r.out.length, r.t]);
    for (let c = 0; c < o.collectives; c++) {
      for (const r of ranks) {
        for (let k = 0; k < per; k++) {
          const e = r.ext++;
          const corr = 1_000_000n + e;
          const dur = (8_000n + rnd(4000)) * r.slow / 10n;
          ev(r, 'cpu_op', 'aten::linear', r.pid, r.t, 9000n, `"External id":${e}`);
          ev(r, 'cuda_runtime', 'cudaLaunchKernel', r.pid, r.t + 2000n, 3000n, `"External id":${e},"correlation":${corr}`);
          ev(r, 'kernel', `void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_${64 << (k % 3)}x64_32x6_nn_align4>(Params)`, 7,
             r.t + 6000n, dur, `"External id":${e},"correlation":${corr},"device":0,"stream":7`);
          r.t += dur + 500n;
        }
      }
      const group = c % 5 === 4 ? 1 : 0;
      const nelems = SIZES[c % 3];
      const name = c % 2 ? 'allgather' : 'allreduce';
      const coll = `"Collective name":"${name}","In msg nelems":${nelems},"Out msg nelems":${nelems},` +
          `"Group size":${o.ranks},"dtype":"Float","Process Group Name":"${group}","Seq":${seqs[group]++}`;
      const last = ranks.reduce((m, r) => (r.t > m ? r.t : m), 0n) + 3000n;
      const end = last + 20_000n + nelems / 8000n;
      for (const r of ranks) {
        const e = r.ext++;
        const corr = 1_000_000n + e;
        const arrive = r.t + 3000n;
        ev(r, 'cpu_op', 'record_param_comms', r.pid, r.t, 2000n, `"External id":${e},${coll}`);
        ev(r, 'cuda_runtime', 'cudaLaunchKernel', r.pid, r.t + 500n, 2000n, `"External id":${e},"correlation":${corr}`);
        ev(r, 'kernel', `ncclDevKernel_${name === 'allreduce' ? 'AllReduce_Sum' : 'AllGather'}_f32_RING_LL(ncclDevComm*, unsigned long)`,
           20 + group, arrive, end - arrive, `"External id":${e},"correlation":${corr},"device":0,"stream":${20 + group},${coll}`);
        r.t += 4000n;  // the host goes on; the next collective's kernel waits for this one
      }
      for (const r of ranks) if (r.t < end) r.t = end;
    }
    ranks.forEach((r, i) => r.out.splice(marks[i][0], 0,
        `{"ph":"X","cat":"user_annotation","name":"ProfilerStep#${step}","pid":${r.pid},"tid":${r.pid},` +
        `"ts":${US(marks[i][1] + r.offset)},"dur":${US(r.t - marks[i][1] + 1000n)},"args":{}}`));
    for (const r of ranks) r.t += 50_000n;
  }
  return ranks.map((r) => `{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100"}],` +
      `"distributedInfo":{"backend":"nccl","rank":${r.rank},"world_size":${o.ranks}},"traceEvents":[\n${r.out.join(',\n')}\n]}\n`);
}

function generate(o) {
  const dir = o.dir || path.join(os.tmpdir(), `opscope_job_page_${o.ranks}x${o.collectives * o.steps}`);
  fs.mkdirSync(dir, {recursive: true});
  const files = [...Array(o.ranks).keys()].map((r) => path.join(dir, `rank${r}.json`));
  if (!o.dir && !files.every((f) => fs.existsSync(f))) rankTraces(o).forEach((text, r) => fs.writeFileSync(files[r], text));
  const bytes = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
  return {dir, bytes};
}

// ---- one run ----------------------------------------------------------------------------------

// The server, and when it had made the job (its "opened a job" line): the server's share of the
// first view, the rest is the page's (requests, parsing, layout, drawing).
function startServer(bin, dir, t0) {
  const child = spawn(bin, ['explore', dir, '--port', '0', '--quiet'], {stdio: ['ignore', 'pipe', 'pipe']});
  let out = '';
  const made = {at: null};
  const url = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (made.at === null && /opened a job/.test(out)) made.at = (Date.now() - t0) / 1000;
      const m = /http:\/\/127\.0\.0\.1:\d+\/job\.html/.exec(out);
      if (m) resolve(m[0]);
    });
    child.on('exit', () => reject(new Error(`${bin} exited: ${out}`)));
  });
  return {child, url, made};
}

// Waits (in the page) until the job page is drawn with data from every rank: its ready flag, and
// no viewport request in flight.
const READY = () => document.body.dataset.ready === '1';

// The time from an input, dispatched in the page, to the page's next full draw with fresh data
// from every rank, measured in the page (the new page counts its completed fetches in
// window.opscopeJob.fetches, the old one its fetch generations and says "shown" when done).
async function interaction(page, act) {
  return page.evaluate(async (kind) => {
    const j = window.opscopeJob;
    const canvas = document.querySelector('canvas');
    const b = canvas.getBoundingClientRect();
    const x = b.left + b.width * 0.6;
    const y = b.top + 120;
    const fresh = j.fetches !== undefined ? ((n) => () => j.fetches > n && !j.loading())(j.fetches)
                                          : ((g) => () => j.state.generation > g && /shown$/.test(document.getElementById('job-status').textContent))(j.state.generation);
    const t0 = performance.now();
    if (kind === 'zoom') {
      canvas.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, clientX: x, clientY: y, bubbles: true, cancelable: true}));
    } else if (kind === 'pan') {
      canvas.dispatchEvent(new MouseEvent('mousedown', {clientX: x, clientY: y, buttons: 1, bubbles: true}));
      for (const dx of [100, 200]) {
        (j.fetches !== undefined ? window : canvas).dispatchEvent(new MouseEvent('mousemove', {clientX: x - dx, clientY: y, buttons: 1, bubbles: true}));
      }
      window.dispatchEvent(new MouseEvent('mouseup', {clientX: x - 200, clientY: y, bubbles: true}));
    } else {
      const c = j.state.job.collectives[Math.floor(j.state.job.collectives.length / 2)];
      j.selectByKey(`${c.group}:${c.seq}`);
    }
    while (!fresh()) await new Promise((r) => requestAnimationFrame(r));
    return Math.round(performance.now() - t0);
  }, act);
}

// The same in the trace view of one rank (its Timeline: the trace view's own viewport requests).
async function traceInteraction(page, kind) {
  return page.evaluate(async (k) => {
    const tl = window.opscopeApp.timeline();
    const canvas = tl.canvas;
    const b = canvas.getBoundingClientRect();
    const x = b.left + b.width * 0.6;
    const y = b.top + 120;
    const before = tl.accepted;
    const t0 = performance.now();
    if (k === 'zoom') {
      canvas.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, clientX: x, clientY: y, bubbles: true, cancelable: true}));
    } else {
      canvas.dispatchEvent(new MouseEvent('mousedown', {clientX: x, clientY: y, buttons: 1, bubbles: true}));
      for (const dx of [100, 200]) window.dispatchEvent(new MouseEvent('mousemove', {clientX: x - dx, clientY: y, buttons: 1, bubbles: true}));
      window.dispatchEvent(new MouseEvent('mouseup', {clientX: x - 200, clientY: y, bubbles: true}));
    }
    while (!(tl.accepted > before && !tl.fetchTimer)) await new Promise((r) => requestAnimationFrame(r));
    return Math.round(performance.now() - t0);
  }, kind);
}

// CPU ticks (user + system) of each of this bench's child processes (Chromium's and the server's)
// and theirs, by pid, from /proc: on a machine shared with other work, what the server and
// Chromium spend does not grow with the load as their wall times do. Linux only (empty elsewhere).
function cpuTicks() {
  const procs = [];
  let dirs = [];
  try {
    dirs = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch (e) {
    return new Map();
  }
  for (const d of dirs) {
    try {
      const text = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');  // from the state on
      procs.push({pid: Number(d), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12])});
    } catch (e) {
      // exited meanwhile
    }
  }
  const tree = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) if (!tree.has(p.pid) && tree.has(p.ppid)) grew = tree.add(p.pid);
  }
  tree.delete(process.pid);
  return new Map(procs.filter((p) => tree.has(p.pid)).map((p) => [p.pid, p.ticks]));
}

// CPU seconds the processes alive now have used since `before` (cpuTicks()); one that exited
// meanwhile is left out, not subtracted.
function cpuSince(before) {
  let ticks = 0;
  for (const [pid, t] of cpuTicks()) ticks += t - (before.get(pid) || 0);
  return ticks / 100;  // USER_HZ
}

async function run(browser, bin, dir) {
  const cpu0 = cpuTicks();
  const t0 = Date.now();
  const {child, url, made} = startServer(bin, dir, t0);
  const page = await browser.newPage();
  await page.setViewportSize({width: 1500, height: 950});
  try {
    await page.goto(await url);
    await page.waitForFunction(READY, null, {timeout: 120000, polling: 'raf'});
    const first = (Date.now() - t0) / 1000;
    const cpu = cpuSince(cpu0);  // the server's all, Chromium's since
    // What the first view read from the job's API (/api/job and its viewports), in KB.
    const kb = await page.evaluate(() => Math.round(performance.getEntriesByType('resource')
        .filter((e) => /\/api\/job/.test(e.name)).reduce((n, e) => n + e.encodedBodySize, 0) / 1000));
    await page.waitForTimeout(300);  // the page settles (tables laid out, deferred work done)
    const cpuAt = cpuTicks();
    const zoom = await interaction(page, 'zoom');
    const pan = await interaction(page, 'pan');
    const select = await interaction(page, 'select');
    const cpuInteractions = Math.round(cpuSince(cpuAt) * 1000 / 3);  // ms each
    await page.goto(new URL('/#trace=0&tab=details', page.url()).toString());
    await page.waitForFunction(READY, null, {timeout: 60000, polling: 'raf'});
    await page.waitForTimeout(300);
    const traceZoom = await traceInteraction(page, 'zoom');
    const tracePan = await traceInteraction(page, 'pan');
    return {first, server: made.at ?? first, kb, cpu, zoom, pan, select, cpuInteractions, traceZoom, tracePan};
  } finally {
    await page.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
  }
}

const best = (xs) => Math.min(...xs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const o = args();
  const job = generate(o);
  console.log(`job: ${o.ranks} ranks, ${o.steps * o.collectives} collectives, ${(job.bytes / 1e6).toFixed(1)} MB in ${job.dir}`);
  const browser = await chromium.launch({executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
                                         args: ['--no-sandbox', '--disable-gpu']});
  const builds = [['this build', o.new]];
  if (o.old) builds.push(['baseline', o.old]);
  const figures = new Map(builds.map(([name]) => [name, []]));
  try {
    for (let round = 0; round < o.repeat; round++) {
      for (const [name, bin] of round % 2 ? [...builds].reverse() : builds) {
        const f = await run(browser, bin, job.dir);
        figures.get(name).push(f);
        console.log(`  round ${round + 1} ${name}: first view ${f.first.toFixed(2)} s (job made at ${f.server.toFixed(2)} s, ` +
                    `${f.kb} KB read, ${f.cpu.toFixed(2)} CPU s), zoom ${f.zoom} ms, pan ${f.pan} ms, ` +
                    `select ${f.select} ms (${f.cpuInteractions} CPU ms each); trace view zoom ${f.traceZoom} ms, pan ${f.tracePan} ms`);
      }
    }
  } finally {
    await browser.close();
    if (!o.keep && !o.dir) fs.rmSync(job.dir, {recursive: true, force: true});
  }
  const heads = ['first view s', 'job made s', 'page s', 'CPU s', 'job API KB', 'job zoom ms', 'job pan ms',
                 'job select ms', 'CPU ms each', 'trace zoom ms', 'trace pan ms'];
  for (const fs_ of figures.values()) for (const f of fs_) f.page = f.first - f.server;
  console.log(`\n${'build'.padEnd(12)} ${heads.map((h) => h.padStart(15)).join(' ')}   (best / median of ${o.repeat})`);
  for (const [name, fs_] of figures) {
    const col = (k, d) => `${best(fs_.map((f) => f[k])).toFixed(d)} / ${median(fs_.map((f) => f[k])).toFixed(d)}`;
    const cols = [col('first', 2), col('server', 2), col('page', 2), col('cpu', 2), col('kb', 0), col('zoom', 0),
                  col('pan', 0), col('select', 0), col('cpuInteractions', 0), col('traceZoom', 0), col('tracePan', 0)];
    console.log(`${name.padEnd(12)} ${cols.map((c) => c.padStart(15)).join(' ')}`);
  }
  if (o.old) {
    const ratio = (k) => median(figures.get('baseline').map((f) => f[k])) / median(figures.get('this build').map((f) => f[k]));
    console.log(`medians against the baseline: first view ${ratio('first').toFixed(2)}x as fast, ${ratio('cpu').toFixed(2)}x less CPU; ` +
                `zoom ${ratio('zoom').toFixed(2)}x, pan ${ratio('pan').toFixed(2)}x, select ${ratio('select').toFixed(2)}x as fast, ` +
                `${ratio('cpuInteractions').toFixed(2)}x less CPU (target: first view under 2 s, interactions under 100 ms, ` +
                `on ${os.cpus().length} cores at load ${os.loadavg()[0].toFixed(1)})`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
