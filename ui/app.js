// The Explorer app: wires the timeline, the panels, the views and the URL state together.
// The URL hash keeps the view (url_state.js); editing it in an open tab applies it.
import {api} from './api.js';
import {Timeline} from './timeline.js';
import {fmtNs, el} from './format.js';
import * as panels from './panels.js';
import {renderOps, OP_COLUMNS} from './tables.js';
import {renderSummary} from './summary.js';
import {renderNeuron} from './neuron.js';
import {renderCriticalPath, coverageOverlay} from './critical_path.js';
import {parseHash, formatHash} from './url_state.js';
import {DeviceView} from './device.js';
import {CompareView} from './compare.js';
import {Search} from './search.js';
import {installKeys, renderHelp} from './keys.js';
import {renderLegend, renderGroupChips} from './legend.js';
import {renderMemoryPeak} from './memory_lane.js';
import {waitUntilLoaded} from './loading.js';

const $ = (id) => document.getElementById(id);
// latest: which selection F and M act on, the event ('slice') or the box ('box'): the later made.
const state = {
  trace: 0, tab: 'details', sel: null, slice: null, box: null, latest: null, mark: null, info: null, lanes: null, color: 'name',
  ops: {sort: null, filter: '', data: null, loadedFor: null},
};
let timeline = null;
let focused = null;
let device = null;
let compare = null;
let search = null;
let hashTimer = null;
let written = '';
let summaryLoadedFor = null;
let neuronLoadedFor = null;
const cp = {step: 'ProfilerStep', instance: 0, loadedFor: null, highlighted: false};

function setStatus(text) {
  $('status').textContent = text;
}

// Shows a message bar (URL values that could not be used, failed requests) until dismissed.
function message(text) {
  const bar = $('message');
  bar.hidden = false;
  bar.querySelector('.messages').append(el('div', {class: 'message'}, text));
}

function clearMessages() {
  $('message').hidden = true;
  $('message').querySelector('.messages').textContent = '';
}

function currentView() {
  const L = timeline.layout;
  return {
    trace: state.trace, t0: timeline.t0, t1: timeline.t1, y: timeline.scrollY,
    collapsed: L.collapsed.size ? [...L.collapsed] : undefined, pinned: L.pinned, rows: [...L.expanded],
    sel: state.sel, box: state.box, mark: state.mark, tab: state.tab, q: search.q || undefined,
    qi: search.index >= 0 ? search.index : undefined, re: search.regex, qk: search.kind, qs: search.sort,
    color: state.color, sort: state.ops.sort,
    opf: state.ops.filter, cmp: compare.pair, align: compare.align,
  };
}

function writeHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    written = formatHash(currentView());
    history.replaceState(null, '', written);
  }, 100);
}

function offset() {
  return state.lanes ? state.lanes.trace.start_ns : 0;
}

function laneTitle(id) {
  return timeline.laneTitle(id);
}

function panelCtx() {
  return {onJump: (ref) => jump(ref), offset: offset(), origin: state.lanes ? state.lanes.trace.origin_ns : null, laneTitle};
}

function showTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.tab === tab);
  for (const p of document.querySelectorAll('.panel')) p.hidden = p.id !== `panel-${tab}`;
  document.body.classList.toggle('comparing', tab === 'compare');
  if (tab === 'ops') loadOps();
  if (tab === 'summary') loadSummary();
  if (tab === 'neuron') loadNeuron();
  if (tab === 'critical') loadCriticalPath();
  if (tab === 'device') device.load(state.sel);
  if (tab === 'compare') compare.load();
  writeHash();
}

// Selects an event (null clears). keepTab: stay on the current tab instead of showing details.
async function select(id, {keepTab = false} = {}) {
  state.sel = id;
  state.slice = null;
  if (id !== null) state.latest = 'slice';
  timeline.selected = id;
  timeline.chain = null;
  timeline.draw();
  writeHash();
  if (id === null) return true;
  try {
    const [slice, chain] = await Promise.all([api.slice(state.trace, id), api.chain(state.trace, id)]);
    if (state.sel !== id) return true;
    state.slice = slice;
    timeline.chain = chain;
    timeline.draw();
    panels.renderDetails($('details'), slice, chain, panelCtx());
    device.reset();
    if (state.tab === 'device') device.load(id);
    else if (!keepTab && state.tab !== 'details') showTab('details');
    return true;
  } catch (e) {
    message(`event ${id}: ${e.message}`);
    state.sel = null;
    timeline.selected = null;
    writeHash();
    return false;
  }
}

// A click on a memory lane's peak: zooms to it and lists the ops holding the most there.
function showMemoryPeak(laneId) {
  const lane = timeline.layout.info.get(laneId);
  if (!lane || !lane.memory) return;
  const t = lane.memory.peak_ts_ns;
  const half = Math.max(5000, (state.lanes.trace.end_ns - state.lanes.trace.start_ns) * 0.01);
  timeline.setView(t - half, t + half);
  renderMemoryPeak($('details'), lane, panelCtx(), (name) => highlightOp({name}));
  showTab('details');
  setStatus(`${lane.title}: peak at ${fmtNs(t - offset())}`);
}

// Jumps to an event listed in a panel: brings it into view (time and lanes) and selects it.
function jump(ref, opts = {}) {
  timeline.reveal(ref);
  return select(ref.id, opts);
}

async function onBox(box) {
  state.box = {t0: box.t0, t1: box.t1};
  state.latest = 'box';
  writeHash();
  try {
    const sel = await api.select(state.trace, {t0: box.t0, t1: box.t1, lanes: box.lanes.join(',')});
    panels.renderSelection($('selection'), sel, offset());
    $('ops-scope-selection').disabled = false;
    $('ops-scope-selection').checked = true;
    if (state.tab === 'ops') loadOps();
    else showTab('details');
  } catch (e) {
    message(`selection: ${e.message}`);
  }
}

async function loadOps({refetch = true} = {}) {
  const useSel = $('ops-scope-selection').checked && state.box;
  const params = useSel ? {t0: state.box.t0, t1: state.box.t1} : {};
  if ($('ops-shapes').checked) params.shapes = 1;
  const key = JSON.stringify([state.trace, params]);
  try {
    if (refetch && state.ops.loadedFor !== key) {
      state.ops.data = await api.ops(state.trace, params);
      state.ops.loadedFor = key;
    }
    const info = renderOps($('ops'), state.ops.data, {
      onRow: highlightOp, sort: state.ops.sort, filter: state.ops.filter, deviceAnnotations: $('ops-device-ann').checked,
      onSort: (s) => {
        state.ops.sort = s;
        writeHash();
      },
    });
    const scope = useSel ? `rows for the selection (${fmtNs(state.box.t1 - state.box.t0)})` : 'rows for the whole trace';
    const hidden = info.hiddenDeviceAnnotations ? `; ${info.hiddenDeviceAnnotations} device-side annotation rows hidden` : '';
    $('ops-note').textContent = `${info.shown} of ${info.total} ${scope}${hidden}`;
  } catch (e) {
    $('ops').textContent = `op table: ${e.message}`;
  }
}

// Marks an op table row's events: by their exact name, or for a row that groups several names
// (ProfilerStep* holds every ProfilerStep#N) by the row's search.
async function highlightOp(row) {
  const hl = row.search ? {q: row.search, regex: true} : {q: row.name, exact: true};
  timeline.setHighlight(hl);
  try {
    const r = await api.search(state.trace, {q: hl.q, exact: hl.exact ? 1 : undefined, regex: hl.regex ? 1 : undefined, limit: 1});
    setStatus(`${r.total} events ${row.search ? `of ${row.name}` : `named ${row.name}`} marked`);
    // Brings the first event into view (time and lanes) unless one is on screen already.
    const top = timeline.scrollTop();
    const name = r.events.length ? r.events[0].name : row.name;
    const shown = timeline.rects.some((x) => x.name === name && x.y >= top && x.y + x.h <= timeline.height);
    if (r.events.length && !shown) timeline.reveal(r.events[0]);
  } catch (e) {
    setStatus(e.message);
  }
}

async function loadSummary() {
  if (summaryLoadedFor === state.trace) return;
  try {
    const s = await api.summary(state.trace);
    renderSummary($('summary'), s, panelCtx());
    noteNeuron(state.trace, s);
    summaryLoadedFor = state.trace;
  } catch (e) {
    $('summary').textContent = `summary: ${e.message}`;
  }
}

// The NeuronCore tab is offered once the trace's summary shows Neuron device data.
function noteNeuron(trace, s) {
  if (trace === state.trace) $('tab-neuron').hidden = !s.figures.neuron_device;
}

async function loadNeuron() {
  if (neuronLoadedFor === state.trace) return;
  const trace = state.trace;
  $('neuron').textContent = 'computing the NeuronCore figures…';
  try {
    const s = await api.summary(trace);
    if (trace !== state.trace) return;
    noteNeuron(trace, s);
    renderNeuron($('neuron'), s.figures.neuron_device || null);
    neuronLoadedFor = trace;
  } catch (e) {
    $('neuron').textContent = `NeuronCore: ${e.message}`;
  }
}

// The Critical path panel: the path of the step asked for, once per trace and step.
async function loadCriticalPath() {
  const key = `${state.trace}\x1f${cp.step}\x1f${cp.instance}`;
  if (cp.loadedFor === key) return;
  const box = $('critical');
  box.textContent = 'finding the critical path…';
  const query = {step: cp.step, instance: cp.instance};
  try {
    const r = await api.criticalPath(state.trace, query);
    cp.loadedFor = key;
    timeline.setCoverage(cp.highlighted && r.ok ? coverageOverlay(r) : null);
    renderCriticalPath(box, r, panelCtx(), {
      query, highlighted: cp.highlighted,
      onQuery: (q) => {
        cp.step = q.step;
        cp.instance = q.instance;
        if (cp.highlighted) timeline.setHighlight({criticalPath: {step: cp.step, instance: cp.instance}});
        loadCriticalPath();
      },
      onHighlight: (on) => {
        cp.highlighted = on;
        timeline.setHighlight(on ? {criticalPath: {step: cp.step, instance: cp.instance}} : null);
        timeline.setCoverage(on ? coverageOverlay(r) : null);
        setStatus(on ? `critical path of ${r.step || 'the trace'} marked` : '');
      },
    });
  } catch (e) {
    box.textContent = `critical path: ${e.message}`;
  }
}

function onLayoutChange() {
  renderGroupChips($('groups'), timeline);
  writeHash();
}

async function openTrace(index) {
  state.trace = index;
  state.sel = null;
  state.slice = null;
  state.box = null;
  state.mark = null;
  state.ops.loadedFor = null;
  summaryLoadedFor = null;
  neuronLoadedFor = null;
  $('tab-neuron').hidden = state.tab !== 'neuron';
  cp.loadedFor = null;
  cp.highlighted = false;
  device.reset();
  search.reset();
  const lanes = await api.lanes(index);
  state.lanes = lanes;
  $('trace-select').value = index;
  timeline.trace = index;
  timeline.selected = null;
  timeline.chain = null;
  timeline.markRange = null;
  timeline.highlight = null;
  timeline.layout.collapsed.clear();
  timeline.layout.pinned = [];
  timeline.layout.expanded.clear();
  timeline.scrollY = 0;
  timeline.setLanes(lanes);
  const t = lanes.trace;
  timeline.offset = t.start_ns;
  timeline.extent = {t0: t.start_ns, t1: t.end_ns};
  renderGroupChips($('groups'), timeline);
  const info = state.info.traces[index];
  $('trace-meta').textContent = `${t.slices.toLocaleString()} events · ${fmtNs(t.end_ns - t.start_ns)}` +
      (t.device_type ? ` · ${t.device_type}` : '') + (t.dropped_events ? ` · ${t.dropped_events} dropped` : '');
  document.title = `${info.name} · opscope Explorer`;
  showWhole();
}

// Once the timeline is drawn, has the server compute the Summary and the op table (both cached
// there), so opening those tabs later answers at once.
function prefetch() {
  const trace = state.trace;
  setTimeout(() => {
    api.summary(trace).then((s) => noteNeuron(trace, s)).catch(() => {});
    api.ops(trace).catch(() => {});
  }, 300);
}

function showWhole() {
  const t = state.lanes.trace;
  const pad = (t.end_ns - t.start_ns) * 0.01;
  timeline.setView(t.start_ns - pad, t.end_ns + pad, {silent: true});
}

// Applies a view parsed from the URL; values that do not fit this trace become messages.
async function applyView(view, errors) {
  const msgs = errors.map((e) => `URL: ${e}`);
  if (view.trace !== undefined && view.trace !== state.trace) await openTrace(view.trace);
  const L = timeline.layout;
  const lanesOk = (key, ids) => {
    const bad = ids.filter((id) => !L.info.has(id));
    if (bad.length) msgs.push(`URL: ${key}=${bad.join(',')}: no such lane in this trace (${L.info.size} lanes)`);
    return ids.filter((id) => L.info.has(id));
  };
  if (view.collapsed) {
    const bad = view.collapsed.filter((p) => !L.groupPaths.has(p));
    if (bad.length) msgs.push(`URL: collapsed=${bad.join(',')}: no such lane group (${[...L.groupPaths.keys()].join(', ')})`);
    L.collapsed = new Set(view.collapsed.filter((p) => L.groupPaths.has(p)));
  }
  if (view.pinned) L.pinned = lanesOk('pinned', view.pinned);
  if (view.rows) L.expanded = new Set(lanesOk('rows', view.rows));
  timeline.relayout();
  renderGroupChips($('groups'), timeline);
  if (view.color) setColor(view.color);
  if (view.t0 !== undefined) timeline.setView(view.t0, view.t1, {silent: true});
  if (view.y !== undefined) {
    timeline.scrollY = view.y;
    timeline.clampScroll();
  }
  if (view.mark) setMark(view.mark);
  if (view.sort) {
    if (OP_COLUMNS.includes(view.sort.key)) state.ops.sort = view.sort;
    else msgs.push(`URL: sort=${view.sort.key}: the op table has no such column (${OP_COLUMNS.join(', ')})`);
  }
  if (view.opf !== undefined) {
    state.ops.filter = view.opf;
    $('ops-filter').value = view.opf;
  }
  if (view.cmp) compare.pair = view.cmp;
  if (view.align !== undefined) compare.align = view.align;
  const mode = {regex: !!view.re, kind: view.qk || 'all', sort: view.qs || 'start'};
  const modeChanged = mode.regex !== search.regex || mode.kind !== search.kind || mode.sort !== search.sort;
  if (view.q !== undefined && (view.q !== search.q || modeChanged)) {
    $('search').value = view.q;
    await search.setMode({...mode, rerun: false});
    if (!(await search.run(view.q, {index: view.qi || 0, show: false, jump: false}))) msgs.push(`URL: q=${view.q} is not a valid regular expression`);
  }
  if (view.box) await onBox({t0: view.box.t0, t1: view.box.t1, lanes: []});
  if (view.sel !== undefined && view.sel !== state.sel) {
    if (!(await select(view.sel, {keepTab: true}))) msgs.push(`URL: sel=${view.sel} does not name an event of this trace`);
    // A link that names the event but not the view (t0/t1, y) opens with the event in view.
    else if (state.slice && (view.t0 === undefined || view.y === undefined)) timeline.reveal(state.slice, {zoom: view.t0 === undefined});
  }
  showTab(view.tab || state.tab);
  timeline.draw();
  for (const m of msgs) message(m);
}

function setColor(mode) {
  state.color = mode;
  timeline.colorBy = mode;
  $('color-by').value = mode;
  timeline.draw();
  writeHash();
}

function setMark(range) {
  state.mark = range;
  timeline.markRange = range;
  timeline.draw();
  if (range) setStatus(`marked ${fmtNs(range.t1 - range.t0)} (from ${fmtNs(range.t0 - offset())})`);
  writeHash();
}

// The time range of the latest selection: the box when it was made after the event was
// selected, else the event, else the box.
function selectionRange() {
  const event = state.slice ? {t0: state.slice.ts, t1: state.slice.ts + Math.max(state.slice.dur, 1)} : null;
  if (state.box && (state.latest === 'box' || !event)) return state.box;
  return event;
}

const keyActions = {
  timeline: () => focused || timeline,
  help: () => toggleHelp(),
  escape: () => {
    if (!$('help').hidden) return toggleHelp(false);
    select(null);
    state.box = null;
    timeline.box = null;
    setMark(null);
  },
  focus: () => {
    if (state.slice && !(state.box && state.latest === 'box')) timeline.reveal({...state.slice, lane: state.slice.lane, row: state.slice.row});
    else if (selectionRange() || state.mark) {
      const r = selectionRange() || state.mark;
      const pad = (r.t1 - r.t0) * 0.1;
      timeline.setView(r.t0 - pad, r.t1 + pad);
    } else setStatus('F: select an event or a box first');
  },
  mark: () => {
    if (state.mark) return setMark(null);
    const r = selectionRange();
    if (r) setMark(r);
    else setStatus('M: select an event or a box first');
  },
  whole: () => showWhole(),
  search: () => $('search').focus(),
};

function toggleHelp(show) {
  const box = $('help');
  box.hidden = show === undefined ? !box.hidden : !show;
  if (!box.hidden) renderHelp(box, () => toggleHelp(false));
}

function wireControls() {
  $('trace-select').addEventListener('change', () => openTrace(Number($('trace-select').value)).then(() => {
    showTab(state.tab);
    prefetch();
  }));
  for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
  $('search').addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    search.enter($('search').value.trim(), e.shiftKey);
  });
  $('ops-scope-whole').addEventListener('change', () => loadOps());
  $('ops-scope-selection').addEventListener('change', () => loadOps());
  $('ops-shapes').addEventListener('change', () => loadOps());
  $('ops-device-ann').addEventListener('change', () => loadOps({refetch: false}));
  $('ops-filter').addEventListener('input', () => {
    state.ops.filter = $('ops-filter').value;
    loadOps({refetch: false});
    writeHash();
  });
  $('align-button').addEventListener('click', async () => setStatus(await compare.alignAt($('align').value.trim())));
  $('color-by').addEventListener('change', () => setColor($('color-by').value));
  $('help-button').addEventListener('click', () => toggleHelp());
  $('message-close').addEventListener('click', clearMessages);
  window.addEventListener('hashchange', () => {
    if (location.hash === written) return;
    const {view, errors} = parseHash(location.hash, state.info.traces.length);
    applyView(view, errors);
  });
}

function makeViews() {
  const shared = {api, tooltip: $('tooltip'), focus: (tl) => (focused = tl)};
  device = new DeviceView({...shared, lanes: () => state.lanes, trace: () => state.trace,
                           neuron: () => state.lanes && state.lanes.trace.neuron, jump: (s) => jump(s)});
  compare = new CompareView({...shared, info: () => state.info, changed: writeHash, message});
  search = new Search({api, trace: () => state.trace, timeline: () => timeline, jump, laneTitle, offset,
                       status: setStatus, showTab, changed: writeHash});
}

async function main() {
  setStatus('loading traces');
  await waitUntilLoaded($('loading'));
  state.info = await api.info();
  if (state.info.job && !location.hash) return location.replace('/job.html');  // ui/job.js
  // The job page sends traces that are not one job here (ui/job.js), saying why.
  const notJob = /(^#|&)notjob=1(&|$)/.test(location.hash) && state.info.not_job;
  const served = state.info.traces.filter((t) => t.phase === 'ready');
  if (!served.length) throw new Error('no trace could be opened (see above)');
  for (const t of state.info.traces) {
    const failed = t.phase !== 'ready';
    $('trace-select').append(el('option', {value: t.index, disabled: failed || undefined},
                                failed ? `${t.name} (could not be opened)` : t.name));
  }
  timeline = new Timeline($('timeline'), {
    api, trace: 0, tooltip: $('tooltip'),
    onSelect: (id) => select(id), onBox, onView: writeHash, onLayout: onLayoutChange,
    onDraw: (tl) => renderLegend($('legend'), tl), onMemoryPeak: showMemoryPeak,
  });
  $('timeline').addEventListener('mouseenter', () => (focused = timeline));
  makeViews();
  wireControls();
  installKeys(keyActions);
  const {view, errors} = parseHash(location.hash, state.info.traces.length);
  await openTrace(view.trace !== undefined ? view.trace : served[0].index);
  await timeline.firstPaint;
  prefetch();
  if (!view.tab) view.tab = state.info.compare ? 'compare' : 'details';
  await applyView(view, errors);
  if (notJob) message(`These traces are not one job (${state.info.not_job}): they open one at a time.`);
  window.opscopeApp = {
    state, timeline: () => timeline, deviceTimeline: () => device.timeline, compareTimelines: () => compare.timelines,
    locate: (name) => timeline.locate(name), select, jump, showTab, search: (q) => search.run(q), searcher: () => search,
  };
  document.body.dataset.ready = '1';
  setStatus('ready');
}

main().catch((e) => {
  setStatus(`failed to load: ${e.message}`);
  message(`The Explorer failed to load: ${e.message}`);
  document.body.dataset.ready = 'error';
});
