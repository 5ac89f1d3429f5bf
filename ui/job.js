// The job page: every rank's trace on one aligned time axis (/api/job: the reference rank's clock
// after clock alignment), a lane group per rank (device streams shown, host lanes on request),
// collectives drawn on every rank with their skew, a ranks x steps heatmap, and the stragglers
// linked to where they made the others wait. Each rank's events come from its own trace's
// viewport API, asked for the rank's own time range and mapped onto the axis.
import {getJson} from './api.js';
import {waitUntilLoaded} from './loading.js';
import {fmtNs, fmtTick, colorFor, el, shortName} from './format.js';

const $ = (id) => document.getElementById(id);
const LABEL_W = 210;
const AXIS_H = 22;
const HEAD_H = 18;
const ROW_H = 12;
const MAX_ROWS = {device: 3, host: 4};
const HOST_GROUPS = new Set(['framework', 'interaction', 'runtime']);
const MAX_TABLE_ROWS = 300;

const S = {
  job: null, t0: 0, t1: 1, folded: new Set(), host: false, sel: null, data: new Map(),
  layout: [], height: 0, hits: [], drag: null, generation: 0, firstPaintMs: null,
};

const plotW = () => Math.max(50, $('job-timeline').clientWidth - LABEL_W);
const toAxis = (r, ts) => r.axis_at_start_ns + r.scale * (ts - r.start_ns);
const toTs = (r, a) => r.start_ns + (a - r.axis_at_start_ns) / r.scale;
const X = (a) => LABEL_W + ((a - S.t0) / (S.t1 - S.t0)) * plotW();
const keyOf = (c) => `${c.group}:${c.seq}`;

// The lanes a rank shows: its device streams (hardware group; engines when it has none), and its
// host lanes when they are asked for.
function shownLanes(r) {
  const hardware = r.lanes.some((l) => l.group === 'hardware');
  return r.lanes.filter((l) => {
    if (l.group === 'hardware' || (!hardware && l.group === 'engines')) return true;
    return S.host && HOST_GROUPS.has(l.group);
  });
}

function computeLayout() {
  const rows = [];
  let y = AXIS_H;
  for (const r of S.job.ranks) {
    rows.push({kind: 'rank', rank: r, y, h: HEAD_H});
    y += HEAD_H;
    if (S.folded.has(r.rank)) continue;
    for (const lane of shownLanes(r)) {
      const n = Math.max(1, Math.min(lane.rows, HOST_GROUPS.has(lane.group) ? MAX_ROWS.host : MAX_ROWS.device));
      rows.push({kind: 'lane', rank: r, lane, y, h: n * ROW_H, rowsShown: n});
      y += n * ROW_H + 2;
    }
  }
  S.layout = rows;
  S.height = y + 6;
}

function scheduleFetch() {
  clearTimeout(S.fetchTimer);
  S.fetchTimer = setTimeout(fetchAll, 30);
}

// One viewport request per rank for the axis range mapped onto that rank's clock.
async function fetchAll() {
  const gen = ++S.generation;
  const width = Math.round(plotW());
  $('job-status').textContent = 'loading…';
  try {
    await Promise.all(S.job.ranks.map(async (r) => {
      const lanes = S.layout.filter((x) => x.kind === 'lane' && x.rank === r).map((x) => x.lane.id);
      if (!lanes.length) return;
      const ts0 = Math.floor(toTs(r, S.t0));
      const ts1 = Math.max(ts0 + 1, Math.ceil(toTs(r, S.t1)));
      const v = await getJson(`/api/trace/${r.trace}/viewport`, {t0: ts0, t1: ts1, width, lanes: lanes.join(',')});
      if (gen !== S.generation) return;
      v.byLane = new Map(v.lanes.map((l) => [l.lane, l.items]));
      S.data.set(r.rank, v);
      draw();
    }));
  } catch (e) {
    $('job-status').textContent = `failed: ${e.message}`;
    return;
  }
  if (gen !== S.generation) return;
  if (S.firstPaintMs === null) S.firstPaintMs = performance.now();
  $('job-status').textContent = `${S.job.ranks.length} ranks · ${fmtNs(S.t1 - S.t0)} shown`;
  document.body.dataset.ready = '1';
}

function drawAxis(ctx, w) {
  const span = S.t1 - S.t0;
  const raw = span / 8;
  const step = [1, 2, 5].map((m) => m * 10 ** Math.floor(Math.log10(raw))).find((s) => s >= raw) ||
      10 ** Math.ceil(Math.log10(raw));
  ctx.fillStyle = '#f0f2f6';
  ctx.fillRect(0, 0, w, AXIS_H);
  ctx.fillStyle = '#444';
  ctx.font = '11px system-ui';
  for (let t = Math.ceil(S.t0 / step) * step; t <= S.t1; t += step) {
    const x = X(t);
    ctx.fillRect(x, AXIS_H - 5, 1, 5);
    ctx.fillText(fmtTick(t, step), x + 2, 13);
  }
  ctx.fillText(S.job.clocks_aligned ? `aligned on rank ${S.job.reference_rank}'s clock` : 'clocks as recorded', 6, 13);
}

function drawLane(ctx, row, v) {
  const r = row.rank;
  const items = v ? v.byLane.get(row.lane.id) : null;
  if (!items) return;
  const pxPerNs = plotW() / (S.t1 - S.t0);
  for (const [ts, dur, depth, name, id, count] of items) {
    if (depth >= row.rowsShown) continue;
    const x0 = Math.max(LABEL_W, X(toAxis(r, ts)));
    const x1 = Math.max(x0 + 1, X(toAxis(r, ts)) + dur * r.scale * pxPerNs);
    const y = row.y + depth * ROW_H;
    const label = v.strings[name];
    ctx.globalAlpha = count > 1 ? 0.55 : 1;
    ctx.fillStyle = colorFor(label);
    ctx.fillRect(x0, y, x1 - x0, ROW_H - 1);
    S.hits.push({x0, x1, y0: y, y1: y + ROW_H, label, dur, count, rank: r, id});
    if (x1 - x0 > 40 && count === 1) {
      ctx.globalAlpha = 1;
      ctx.fillStyle = '#111';
      ctx.fillText(shortName(label, Math.floor((x1 - x0) / 6)), x0 + 2, y + ROW_H - 3);
    }
  }
  ctx.globalAlpha = 1;
}

// The selected collective: the skew as a band from the first arrival to the last, each rank's
// kernel outlined where it runs, and its arrival marked.
function drawSelection(ctx) {
  const c = S.sel;
  if (!c || !c.members.length) return;
  const starts = c.members.map((m) => m[4]);
  const first = Math.min(...starts);
  const last = Math.max(...starts);
  ctx.fillStyle = 'rgba(255, 170, 0, 0.18)';
  ctx.fillRect(X(first), AXIS_H, Math.max(1, X(last) - X(first)), S.height - AXIS_H);
  ctx.strokeStyle = '#e0115f';
  ctx.lineWidth = 2;
  for (const [rank, , lane, depth, start, end] of c.members) {
    const laneRow = S.layout.find((x) => x.kind === 'lane' && x.rank.rank === rank && x.lane.id === lane);
    const row = laneRow || S.layout.find((x) => x.kind === 'rank' && x.rank.rank === rank);
    const y = laneRow ? row.y + Math.min(depth, row.rowsShown - 1) * ROW_H : row.y + 2;
    const h = laneRow ? ROW_H - 1 : HEAD_H - 4;
    ctx.strokeRect(X(start), y, Math.max(2, X(end) - X(start)), h);
    ctx.fillStyle = '#e0115f';
    ctx.fillRect(X(start) - 1, row.y, 2, laneRow ? row.h : HEAD_H);
  }
  ctx.lineWidth = 1;
  ctx.fillStyle = '#8a3b00';
  ctx.font = '11px system-ui';
  const lastRank = c.last_rank >= 0 ? ` · last: rank ${c.last_rank}` : '';
  ctx.fillText(`${c.name} ${c.group}#${c.seq}: skew ${fmtNs(c.skew_ns)}${lastRank}`, Math.max(LABEL_W + 2, X(first)), AXIS_H + 10);
}

function draw() {
  const canvas = $('job-timeline');
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.parentElement.clientWidth;
  canvas.style.width = `${w}px`;
  canvas.style.height = `${S.height}px`;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(S.height * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, S.height);
  ctx.font = '10px system-ui';
  S.hits = [];
  for (const row of S.layout) {
    if (row.kind === 'lane') drawLane(ctx, row, S.data.get(row.rank.rank));
  }
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, LABEL_W, S.height);
  for (const row of S.layout) {
    ctx.fillStyle = row.kind === 'rank' ? '#1b1f27' : '#555';
    if (row.kind === 'rank') {
      const r = row.rank;
      ctx.fillStyle = '#e6ebf5';
      ctx.fillRect(0, row.y, w, HEAD_H);
      ctx.fillStyle = '#1b1f27';
      ctx.font = '600 11px system-ui';
      const offset = S.job.clocks_aligned ? ` · clock ${r.clock_offset_us >= 0 ? '+' : ''}${r.clock_offset_us.toFixed(1)} us` : '';
      ctx.fillText(`${S.folded.has(r.rank) ? '▸' : '▾'} rank ${r.rank}${offset}`, 4, row.y + 13);
      ctx.font = '10px system-ui';
    } else {
      ctx.fillText(shortName(row.lane.title, 34), 14, row.y + ROW_H - 2);
    }
  }
  drawAxis(ctx, w);
  drawSelection(ctx);
}

function setRange(t0, t1) {
  const min = 100;
  if (t1 - t0 < min) [t0, t1] = [(t0 + t1) / 2 - min / 2, (t0 + t1) / 2 + min / 2];
  S.t0 = t0;
  S.t1 = t1;
  draw();
  scheduleFetch();
}

function relayout() {
  computeLayout();
  draw();
  scheduleFetch();
}

function table(headers, rows, onClick, selected) {
  const t = el('table', {class: 'job'});
  t.append(el('tr', {}, ...headers.map(([h, left]) => el('th', {class: left ? 'l' : null}, h))));
  rows.forEach((cells, i) => {
    const tr = el('tr', {class: onClick ? `click${selected && selected(i) ? ' sel' : ''}` : null,
                         onclick: onClick ? () => onClick(i) : null});
    cells.forEach((c, j) => tr.append(el('td', {class: headers[j][1] ? 'l' : null}, c)));
    t.append(tr);
  });
  return t;
}

function traceLink(r, ts0, ts1, slice) {
  const sel = slice >= 0 ? `&sel=${slice}` : '';
  return `/#trace=${r.trace}&t0=${Math.floor(ts0)}&t1=${Math.ceil(ts1)}${sel}`;
}

// Selects a collective instance: zooms to it and lists each rank's arrival and wait.
function select(c) {
  S.sel = c;
  history.replaceState(null, '', c ? `#coll=${encodeURIComponent(keyOf(c))}` : '#');
  renderCollectives();
  const box = $('job-selected');
  box.textContent = '';
  if (!c) return;
  const first = Math.min(...c.members.map((m) => m[4]));
  const end = Math.max(...c.members.map((m) => m[5]));
  const pad = Math.max(end - first, 2000) * 0.6;
  setRange(first - pad, end + pad);
  const rankOf = new Map(S.job.ranks.map((r) => [r.rank, r]));
  box.append(el('div', {}, `${c.name} ${c.group}#${c.seq}: ${c.members.length} ranks, skew ${fmtNs(c.skew_ns)}, ` +
                `transfer ${fmtNs(c.transfer_ns)}` + (c.last_rank >= 0 ? `, rank ${c.last_rank} arrived last` : '')));
  box.append(table([['rank', true], ['arrival'], ['sync wait'], ['kernel'], ['', true]],
                   c.members.map(([rank, slice, , , start, stop, wait]) => {
                     const r = rankOf.get(rank);
                     const link = r && slice >= 0 ? el('a', {href: traceLink(r, toTs(r, start - pad), toTs(r, stop + pad), slice), target: '_blank'}, 'in its trace') : '';
                     return [`rank ${rank}`, `+${fmtNs(start - first)}`, fmtNs(wait), fmtNs(stop - start), link];
                   })));
}

function selectByKey(key) {
  const c = S.job.collectives.find((x) => keyOf(x) === key);
  if (c) select(c);
  return !!c;
}

function renderCollectives() {
  const sorted = [...S.job.collectives].sort((a, b) => b.skew_ns - a.skew_ns || a.seq - b.seq);
  const shown = sorted.slice(0, MAX_TABLE_ROWS);
  const box = $('job-collectives');
  box.textContent = '';
  if (sorted.length > shown.length) box.append(el('div', {class: 'muted'}, `${shown.length} of ${sorted.length} shown`));
  box.append(table(
      [['group', true], ['seq'], ['name', true], ['bytes'], ['ranks'], ['skew'], ['transfer'], ['bus GB/s'], ['last rank']],
      shown.map((c) => [c.group, c.seq, c.name, c.bytes || '-', c.members.length, fmtNs(c.skew_ns), fmtNs(c.transfer_ns),
                        c.busbw_gbps === null ? '-' : c.busbw_gbps.toFixed(2), c.last_rank >= 0 ? c.last_rank : '-']),
      (i) => select(shown[i]), (i) => shown[i] === S.sel));
}

function renderSummary() {
  const job = S.job;
  const top = job.stragglers.find((s) => s.wait_caused_us > 0);
  const findings = $('job-findings');
  for (const f of job.findings) findings.append(el('li', {}, f));
  for (const w of job.warnings) findings.append(el('li', {class: 'muted'}, w));
  if (top && top.worst_seq >= 0) {
    const key = `${top.worst_group}:${top.worst_seq}`;
    findings.append(el('li', {}, `Rank ${top.rank} made the others wait longest at ${top.worst_group}#${top.worst_seq} (${fmtNs(top.worst_wait_us * 1e3)}): `,
                       el('a', {id: 'job-straggler-link', onclick: () => selectByKey(key)}, 'show it')));
  }
  $('job-stragglers').append(table(
      [['rank', true], ['times last'], ['wait caused'], ['worst instance', true]],
      job.stragglers.map((s) => [`rank ${s.rank}`, s.times_last, fmtNs(s.wait_caused_us * 1e3),
        s.worst_seq >= 0 ? el('a', {onclick: () => selectByKey(`${s.worst_group}:${s.worst_seq}`)}, `${s.worst_group}#${s.worst_seq}`) : '-'])));
  $('job-ranks').append(table(
      [['rank', true], ['clock offset'], ['drift ppm'], ['busy'], ['computation'], ['exposed comm'], ['overlap %'], ['file', true]],
      job.ranks.map((r) => [el('a', {href: `/#trace=${r.trace}`, target: '_blank'}, `rank ${r.rank}`),
        `${r.clock_offset_us.toFixed(3)} us`, r.clock_drift_ppm.toFixed(2), fmtNs(r.busy_us * 1e3), fmtNs(r.computation_us * 1e3),
        fmtNs(r.exposed_communication_us * 1e3), r.overlap_pct === null ? '-' : r.overlap_pct.toFixed(2), r.file])));
  renderHeatmap();
}

// The heatmap's colour for a wait: white at 0, dark red at the largest wait in the job.
const heatColor = (wait, max) => `hsl(0 80% ${Math.round(98 - (max > 0 ? wait / max : 0) * 50)}%)`;

// The legend under the heatmap: the colour scale from 0 to the largest per-step wait, in time units.
function heatLegend(max) {
  const stops = [0, 0.25, 0.5, 0.75, 1];
  const bar = el('div', {class: 'heat-bar', style: `background: linear-gradient(to right, ${stops.map((f) => heatColor(f * max, max)).join(', ')})`});
  const ticks = el('div', {class: 'heat-ticks'}, ...[0, 0.5, 1].map((f) => el('span', {}, fmtNs(f * max))));
  return el('div', {id: 'job-heat-legend', class: 'heat-legend', 'data-max-ns': max},
            el('span', {class: 'muted'}, 'sync wait in the step'), el('div', {}, bar, ticks));
}

// Ranks x steps: each cell a rank's sync wait in that step (the sum of its waits at the
// collectives it started in the step, as report --json's step_wait), darker as it waits longer;
// a click zooms the timeline to that rank's step.
function renderHeatmap() {
  const {numbers, ranks} = S.job.steps;
  const box = $('job-heatmap');
  if (!numbers.length) {
    box.append(el('div', {class: 'muted'}, 'no ProfilerStep# annotations in these traces'));
    return;
  }
  const cols = numbers.slice(0, 200).map((n, j) => j);
  let max = 0;
  for (const r of ranks) for (const j of cols) if (r.wait[j] !== null) max = Math.max(max, r.wait[j]);
  const t = el('table', {class: 'heat'});
  t.append(el('tr', {}, el('th', {}, 'rank / step'), ...cols.map((j) => el('th', {}, numbers[j]))));
  for (const r of ranks) {
    const tr = el('tr', {}, el('th', {}, `rank ${r.rank}`));
    for (const j of cols) {
      const wait = r.wait[j];
      if (r.dur[j] === null || wait === null) {
        tr.append(el('td', {title: `rank ${r.rank}: no step ${numbers[j]}`}, '·'));
        continue;
      }
      const d = r.dur[j];
      tr.append(el('td', {title: `rank ${r.rank}, step ${numbers[j]}: waited ${fmtNs(wait)} at collectives (step ${fmtNs(d)})`,
                          'data-rank': r.rank, 'data-step': numbers[j], 'data-wait-ns': wait,
                          style: `background: ${heatColor(wait, max)}`,
                          onclick: () => setRange(r.start[j] - d * 0.05, r.start[j] + d * 1.05)}));
    }
    t.append(tr);
  }
  box.append(t);
  if (cols.length < numbers.length) box.append(el('div', {class: 'muted'}, `first ${cols.length} of ${numbers.length} steps`));
  box.append(heatLegend(max));
}

function wireCanvas() {
  const canvas = $('job-timeline');
  const tip = $('job-tooltip');
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const rect = canvas.getBoundingClientRect();
    const x = e.clientX - rect.left - LABEL_W;
    const at = S.t0 + (Math.max(0, x) / plotW()) * (S.t1 - S.t0);
    const f = Math.exp(e.deltaY * 0.0015);
    setRange(at - (at - S.t0) * f, at + (S.t1 - at) * f);
  }, {passive: false});
  canvas.addEventListener('mousedown', (e) => (S.drag = {x: e.clientX, t0: S.t0, t1: S.t1, moved: false}));
  window.addEventListener('mouseup', () => setTimeout(() => (S.drag = null), 0));
  canvas.addEventListener('mousemove', (e) => {
    const rect = canvas.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    if (S.drag && e.buttons === 1 && Math.abs(e.clientX - S.drag.x) > 2) {
      S.drag.moved = true;
      const dt = ((e.clientX - S.drag.x) / plotW()) * (S.drag.t1 - S.drag.t0);
      setRange(S.drag.t0 - dt, S.drag.t1 - dt);
      return;
    }
    const hit = S.hits.find((h) => x >= h.x0 && x <= h.x1 + 1 && y >= h.y0 && y < h.y1);
    if (!hit) {
      tip.style.display = 'none';
      return;
    }
    tip.textContent = `rank ${hit.rank.rank} · ${hit.label} · ${fmtNs(hit.dur)}` + (hit.count > 1 ? ` (${hit.count} events merged)` : '');
    tip.style.display = 'block';
    tip.style.left = `${e.clientX + 12}px`;
    tip.style.top = `${e.clientY + 12}px`;
  });
  canvas.addEventListener('mouseleave', () => (tip.style.display = 'none'));
  canvas.addEventListener('click', (e) => {
    if (S.drag && S.drag.moved) return;
    const rect = canvas.getBoundingClientRect();
    const y = e.clientY - rect.top;
    const head = S.layout.find((r) => r.kind === 'rank' && y >= r.y && y < r.y + r.h);
    if (head && e.clientX - rect.left < LABEL_W) {
      if (S.folded.has(head.rank.rank)) S.folded.delete(head.rank.rank);
      else S.folded.add(head.rank.rank);
      relayout();
    }
  });
  window.addEventListener('resize', () => relayout());
  $('job-host').addEventListener('change', () => {
    S.host = $('job-host').checked;
    relayout();
  });
}

async function main() {
  await waitUntilLoaded($('loading'));
  S.job = await getJson('/api/job');
  const job = S.job;
  $('job-meta').textContent = `${job.ranks.length} of ${job.world_size} ranks · ${job.collectives.length} collectives` +
      (job.partial ? ' · partial: some rank files could not be read' : '');
  if (job.ranks.length) $('job-traces').href = `/#trace=${job.ranks[0].trace}`;
  S.t0 = 0;
  S.t1 = job.t1;
  computeLayout();
  wireCanvas();
  renderSummary();
  renderCollectives();
  draw();
  const key = new URLSearchParams(location.hash.replace(/^#/, '')).get('coll');
  if (!(key && selectByKey(key))) scheduleFetch();
  window.opscopeJob = {state: S, select, selectByKey, setRange};
}

main().catch((e) => {
  $('job-status').textContent = `failed to load the job: ${e.message}`;
  document.body.dataset.ready = 'error';
});
