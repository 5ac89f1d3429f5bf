// The Explorer app: wires the timeline, the device trace, the panels and the URL state together.
// The URL hash keeps the view (trace, time range, selection, tab, search) so it can be shared.
import {api} from './api.js';
import {Timeline} from './timeline.js';
import {fmtNs, el, colorFor} from './format.js';
import * as panels from './panels.js';

const $ = (id) => document.getElementById(id);
const state = {trace: 0, tab: 'details', sel: null, q: '', box: null, info: null, lanes: null};
let timeline = null;
let deviceTimeline = null;
let compareTimelines = [];
let activeTimeline = null;
let hashTimer = null;

function parseHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const num = (k) => (p.has(k) && p.get(k) !== '' && Number.isFinite(Number(p.get(k))) ? Number(p.get(k)) : null);
  const box = (p.get('box') || '').split(',').map(Number);
  return {trace: num('trace'), t0: num('t0'), t1: num('t1'), sel: num('sel'), tab: p.get('tab'), q: p.get('q'),
          box: box.length === 2 && box.every(Number.isFinite) && box[1] > box[0] ? box : null};
}

function writeHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    const p = new URLSearchParams();
    p.set('trace', state.trace);
    if (timeline) {
      p.set('t0', Math.floor(timeline.t0));
      p.set('t1', Math.ceil(timeline.t1));
    }
    if (state.sel !== null) p.set('sel', state.sel);
    if (state.box) p.set('box', `${state.box.t0},${state.box.t1}`);
    if (state.tab) p.set('tab', state.tab);
    if (state.q) p.set('q', state.q);
    history.replaceState(null, '', '#' + p.toString());
  }, 100);
}

function setStatus(text) {
  $('status').textContent = text;
}

function showTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.tab === tab);
  for (const p of document.querySelectorAll('.panel')) p.hidden = p.id !== `panel-${tab}`;
  if (tab === 'ops') loadOps();
  if (tab === 'summary') loadSummary();
  if (tab === 'device') loadDevice();
  if (tab === 'compare') loadCompare();
  writeHash();
}

function offset() {
  return state.lanes ? state.lanes.trace.start_ns : 0;
}

async function select(id) {
  state.sel = id;
  timeline.selected = id;
  if (id === null) {
    timeline.chain = null;
    timeline.draw();
    writeHash();
    return;
  }
  try {
    const [slice, chain] = await Promise.all([api.slice(state.trace, id), api.chain(state.trace, id)]);
    if (state.sel !== id) return;
    timeline.chain = chain;
    timeline.draw();
    panels.renderDetails($('details'), slice, chain, jump, offset());
    deviceLoadedFor = null;
    if (state.tab === 'device') loadDevice();
    else if (state.tab !== 'details') showTab('details');
  } catch (e) {
    setStatus(`event ${id}: ${e.message}`);
  }
  writeHash();
}

// Jumps to an event listed in a panel: zoom to it, scroll its lane into view, select it.
function jump(ref) {
  timeline.reveal(ref);
  select(ref.id);
}

async function onBox(box) {
  state.box = box;
  writeHash();
  try {
    const sel = await api.select(state.trace, {t0: box.t0, t1: box.t1, lanes: box.lanes.join(',')});
    panels.renderSelection($('selection'), sel, offset());
    $('ops-scope-selection').disabled = false;
    $('ops-scope-selection').checked = true;
    if (state.tab === 'ops') loadOps();
    else showTab('details');
  } catch (e) {
    setStatus(`selection: ${e.message}`);
  }
}

async function loadOps() {
  const useSel = $('ops-scope-selection').checked && state.box;
  const params = useSel ? {t0: state.box.t0, t1: state.box.t1} : {};
  if ($('ops-shapes').checked) params.shapes = 1;
  try {
    const ops = await api.ops(state.trace, params);
    panels.renderOps($('ops'), ops, highlightOp);
    $('ops-note').textContent = useSel ? `rows for the selection (${fmtNs(state.box.t1 - state.box.t0)})` : 'rows for the whole trace';
  } catch (e) {
    $('ops').textContent = `op table: ${e.message}`;
  }
}

async function highlightOp(row) {
  timeline.highlightName = row.name;
  timeline.highlightRe = null;
  timeline.draw();
  try {
    const r = await api.search(state.trace, {q: row.name, exact: 1, limit: 1});
    setStatus(`${r.total} events named ${row.name} highlighted`);
    if (r.events.length && !timeline.rects.some((x) => x.name === row.name)) timeline.reveal(r.events[0]);
  } catch (e) {
    setStatus(e.message);
  }
}

let summaryLoadedFor = null;
async function loadSummary() {
  if (summaryLoadedFor === state.trace) return;
  try {
    const s = await api.summary(state.trace);
    panels.renderSummary($('summary'), s, jump, offset());
    summaryLoadedFor = state.trace;
  } catch (e) {
    $('summary').textContent = `summary: ${e.message}`;
  }
}

let deviceLoadedFor = null;
async function loadDevice() {
  const box = $('device-legend');
  if (state.sel === null) {
    box.textContent = 'Select a device execution (or an op that launched one) to see its engine and DMA lanes.';
    return;
  }
  if (deviceLoadedFor === state.sel) return;
  deviceLoadedFor = state.sel;
  try {
    const d = await api.device(state.trace, state.sel);
    box.textContent = '';
    if (!d.execution) {
      box.textContent = 'The selected event reaches no device execution.';
      return;
    }
    if (d.lanes.length === 0) {
      box.textContent = `${d.execution.name}: this trace has no engine instruction lanes (record with the DEVICE mode).`;
      return;
    }
    box.append(el('span', {}, `${d.execution.name} (${fmtNs(d.execution.dur)}), coloured by the framework op that issued each instruction: `));
    for (const op of d.ops) {
      box.append(el('span', {class: 'legend-item', 'data-ext': op.ext},
                    el('span', {class: 'swatch', style: `background:${colorFor('ext:' + op.ext)}`}), `${op.name} (${op.count})`));
    }
    if (!deviceTimeline) {
      deviceTimeline = new Timeline($('device-canvas'), {api, trace: state.trace, colorBy: 'ext', showGroups: false,
                                                        tooltip: $('tooltip'), onSelect: (id) => id !== null && jumpById(id)});
      $('device-canvas').addEventListener('mouseenter', () => (activeTimeline = deviceTimeline));
    }
    deviceTimeline.trace = state.trace;
    deviceTimeline.setLanes(state.lanes, d.lanes);
    deviceTimeline.offset = d.t0;
    const pad = (d.t1 - d.t0) * 0.02;
    deviceTimeline.resize();
    deviceTimeline.setView(d.t0 - pad, d.t1 + pad);
  } catch (e) {
    box.textContent = `device trace: ${e.message}`;
  }
}

async function jumpById(id) {
  const s = await api.slice(state.trace, id);
  jump({id, ts: s.ts, dur: s.dur, lane: s.lane, row: s.row, name: s.name});
}

// Comparison: two or three traces stacked, time axes synchronized relative to an anchor each.
async function loadCompare() {
  const box = $('compare-lanes');
  const traces = state.info.traces;
  if (traces.length < 2) {
    box.textContent = 'Open two or three traces (opscope explore A B [C]) to compare them.';
    return;
  }
  if (compareTimelines.length) return;
  const shown = traces.slice(0, 3);
  box.textContent = '';
  const lanesList = await Promise.all(shown.map((t) => api.lanes(t.index)));
  let syncing = false;
  const sync = (src, t0, t1) => {
    if (syncing) return;
    syncing = true;
    const r0 = t0 - src.offset;
    const r1 = t1 - src.offset;
    for (const tl of compareTimelines) if (tl !== src) tl.setView(tl.offset + r0, tl.offset + r1);
    syncing = false;
  };
  shown.forEach((t, i) => {
    const wrap = el('div', {class: 'compare-item'}, el('div', {class: 'compare-title'}, `${String.fromCharCode(65 + i)}: ${t.name}`));
    const canvasBox = el('div', {class: 'compare-canvas'});
    const canvas = el('canvas', {'data-trace': t.index});
    canvasBox.append(canvas);
    wrap.append(canvasBox);
    box.append(wrap);
    const tl = new Timeline(canvas, {api, trace: t.index, tooltip: $('tooltip'),
                                     onView: (a, b) => sync(tl, a, b), collapsed: ['engines', 'counters']});
    tl.setLanes(lanesList[i]);
    tl.offset = lanesList[i].trace.start_ns;
    canvas.addEventListener('mouseenter', () => (activeTimeline = tl));
    compareTimelines.push(tl);
  });
  const span = Math.max(...lanesList.map((l) => l.trace.end_ns - l.trace.start_ns));
  for (const tl of compareTimelines) tl.setView(tl.offset, tl.offset + span, {silent: true});
  const sel = (id, def) => {
    const s = $(id);
    s.textContent = '';
    traces.forEach((t, i) => s.append(el('option', {value: i}, `${String.fromCharCode(65 + i)}: ${t.name}`)));
    s.value = def;
    s.onchange = loadDiff;
  };
  sel('diff-a', 0);
  sel('diff-b', 1);
  await loadDiff();
}

async function alignCompare() {
  const q = $('align').value.trim();
  const results = await Promise.all(compareTimelines.map((tl) => (q ? api.search(tl.trace, {q, limit: 1}) : null)));
  compareTimelines.forEach((tl, i) => {
    const r = results[i];
    const start = tl.offset;
    tl.offset = r && r.events.length ? r.events[0].ts : tl.offset;
    if (!q) tl.offset = start;
  });
  const first = compareTimelines[0];
  const span = first.t1 - first.t0;
  for (const tl of compareTimelines) tl.setView(tl.offset - span * 0.05, tl.offset + span * 0.95, {silent: true});
  setStatus(q ? `aligned at the first event matching /${q}/` : 'aligned at trace start');
}

async function loadDiff() {
  const a = Number($('diff-a').value);
  const b = Number($('diff-b').value);
  try {
    const d = await api.diff(a, b);
    panels.renderDiff($('diff'), d, state.info.traces[a].name, state.info.traces[b].name);
  } catch (e) {
    $('diff').textContent = `diff: ${e.message}`;
  }
}

async function search(q) {
  state.q = q;
  if (!q) {
    timeline.highlightRe = null;
    timeline.draw();
    writeHash();
    return;
  }
  try {
    timeline.highlightRe = new RegExp(q, 'i');
  } catch (e) {
    setStatus(`bad regular expression: ${e.message}`);
    return;
  }
  timeline.highlightName = null;
  timeline.draw();
  try {
    const r = await api.search(state.trace, {q, limit: 200});
    panels.renderSearch($('search-results'), q, r, jump, offset());
    showTab('search');
  } catch (e) {
    setStatus(e.message);
  }
  writeHash();
}

function renderGroupChips() {
  const bar = $('groups');
  bar.textContent = '';
  for (const g of state.lanes.groups) {
    const chip = el('button', {class: 'group-chip', 'data-group': g.key, title: 'show / hide this lane group'},
                    `${g.title} · ${g.lanes.length}`);
    chip.classList.toggle('off', timeline.collapsed.has(g.key));
    chip.addEventListener('click', () => {
      timeline.toggleGroup(g.key);
      chip.classList.toggle('off', timeline.collapsed.has(g.key));
    });
    bar.append(chip);
  }
}

async function openTrace(index, view) {
  state.trace = index;
  state.sel = null;
  state.box = null;
  summaryLoadedFor = null;
  deviceLoadedFor = null;
  const lanes = await api.lanes(index);
  state.lanes = lanes;
  timeline.trace = index;
  timeline.selected = null;
  timeline.chain = null;
  timeline.setLanes(lanes);
  timeline.offset = lanes.trace.start_ns;
  renderGroupChips();
  const t = lanes.trace;
  const info = state.info.traces[index];
  $('trace-meta').textContent = `${t.slices.toLocaleString()} events · ${fmtNs(t.end_ns - t.start_ns)}` +
      (t.device_type ? ` · ${t.device_type}` : '') + (t.dropped_events ? ` · ${t.dropped_events} dropped` : '');
  document.title = `${info.name} · opscope Explorer`;
  if (view && view.t0 !== null && view.t1 !== null && view.t1 > view.t0) timeline.setView(view.t0, view.t1, {silent: true});
  else timeline.setView(t.start_ns - (t.end_ns - t.start_ns) * 0.01, t.end_ns + (t.end_ns - t.start_ns) * 0.01, {silent: true});
  await timeline.firstPaint;
  if (state.tab === 'ops') loadOps();
  if (state.tab === 'summary') loadSummary();
}

function installKeys() {
  window.addEventListener('keydown', (e) => {
    const tag = (e.target && e.target.tagName) || '';
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || e.ctrlKey || e.metaKey || e.altKey) return;
    const tl = activeTimeline || timeline;
    if (tl.key(e.key.toLowerCase())) {
      e.preventDefault();
    } else if (e.key === 'Escape') {
      select(null);
      timeline.box = null;
      timeline.draw();
    }
  });
}

async function main() {
  state.info = await api.info();
  const hash = parseHash();
  const sel = $('trace-select');
  for (const t of state.info.traces) sel.append(el('option', {value: t.index}, t.name));
  if (hash.trace !== null && hash.trace >= 0 && hash.trace < state.info.traces.length) state.trace = hash.trace;
  sel.value = state.trace;
  sel.addEventListener('change', () => openTrace(Number(sel.value)).then(writeHash));
  timeline = new Timeline($('timeline'), {
    api, trace: state.trace, tooltip: $('tooltip'),
    onSelect: (id) => select(id),
    onBox,
    onView: () => writeHash(),
  });
  activeTimeline = timeline;
  $('timeline').addEventListener('mouseenter', () => (activeTimeline = timeline));
  for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
  $('search').addEventListener('keydown', (e) => {
    if (e.key === 'Enter') search($('search').value.trim());
  });
  $('ops-scope-whole').addEventListener('change', loadOps);
  $('ops-scope-selection').addEventListener('change', loadOps);
  $('ops-shapes').addEventListener('change', loadOps);
  $('align-button').addEventListener('click', alignCompare);
  installKeys();
  await openTrace(state.trace, hash);
  const tab = hash.tab || (state.info.compare ? 'compare' : 'details');
  showTab(tab);
  if (hash.q) {
    $('search').value = hash.q;
    await search(hash.q);
    if (hash.tab) showTab(hash.tab);
  }
  if (hash.box) {
    timeline.box = null;
    await onBox({t0: hash.box[0], t1: hash.box[1], lanes: []});
    if (hash.tab) showTab(hash.tab);
  }
  if (hash.sel !== null) {
    await select(hash.sel);
    if (hash.tab) showTab(hash.tab);
  }
  window.opscopeApp = {
    state, timeline: () => timeline, deviceTimeline: () => deviceTimeline, compareTimelines: () => compareTimelines,
    locate: (name) => timeline.locate(name), select, jump, showTab, search,
  };
  document.body.dataset.ready = '1';
  setStatus('ready');
}

main().catch((e) => {
  setStatus(`failed to load: ${e.message}`);
  document.body.dataset.ready = 'error';
});
