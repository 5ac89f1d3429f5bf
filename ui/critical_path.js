// The Critical path panel: HTA's critical path of one step (its share of the step and why the rest
// is missing, what bounds it, the events it runs through) and HTA's idle-time breakdown per
// stream, from /api/trace/N/critical_path. The "highlight" box marks every event on the path in
// the timeline (/marks?critical_path=1) and shades the stretches the path leaves out by cause.
import {fmtNs, el} from './format.js';
import {sortableTable} from './tables.js';
import {eventButton} from './panels.js';

const BOUND = [
  ['device_compute_ns', 'device compute'], ['communication_ns', 'communication'],
  ['host_ops_ns', 'host ops'], ['launch_overhead_ns', 'launch overhead'], ['idle_ns', 'idle (kernel-kernel)'],
];

function pct(part, whole) {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '';
}

// What the path leaves out, by cause: the coverage's `rest` key, its gaps' cause, how the tab
// names it and the colour the timeline shades it with.
export const COVERAGE_CAUSES = [
  ['host_gaps_ns', 'host_gap', 'host gaps between top-level ops', 'rgba(70, 130, 210, 0.30)'],
  ['sync_waits_ns', 'sync_wait', 'waits for the device (no device edge)', 'rgba(220, 90, 60, 0.30)'],
  ['runtime_lock_ns', 'runtime_lock', 'waits for the CUDA runtime lock', 'rgba(150, 90, 190, 0.30)'],
  ['before_path_ns', 'before_path', 'before the path starts', 'rgba(120, 125, 140, 0.22)'],
  ['after_path_ns', 'after_path', 'after the path ends', 'rgba(120, 125, 140, 0.22)'],
  ['threads_not_connected_ns', 'thread_not_connected', 'threads not connected to the path', 'rgba(235, 175, 30, 0.32)'],
  ['out_of_order_ns', null, 'events out of order (clock skew)', null],
];

const SWATCH = 'display:inline-block;width:10px;height:10px;margin-right:6px;vertical-align:middle;border:1px solid #aab;';
const NOTE = 'color:#7a4300;background:#fff4e0;padding:4px 8px;border-radius:4px;';

// The timeline's overlay for a path: its gaps with the colour and name of their cause.
export function coverageOverlay(cp) {
  if (!cp || !cp.coverage) return null;
  const byCause = new Map(COVERAGE_CAUSES.filter((c) => c[1]).map((c) => [c[1], c]));
  const gaps = cp.coverage.gaps.filter((g) => byCause.has(g.cause)).map((g) => ({
    t0: g.start_ns, t1: g.end_ns, color: byCause.get(g.cause)[3], label: byCause.get(g.cause)[2],
  }));
  return {t0: cp.start_ns, t1: cp.end_ns, gaps, covered: cp.coverage.covered_percent};
}

// The path's share of the step and the rest by cause, with what the trace lacks.
function renderCoverage(box, cp) {
  const c = cp.coverage;
  if (!c) return;
  for (const note of c.notes) box.append(el('p', {class: 'cp-note', style: NOTE}, `Note: ${note}`));
  const past = c.outside_step_ns > 0 ? ` (the step's ${fmtNs(c.step_ns)} and ${fmtNs(c.outside_step_ns)} of device work past its end)` : '';
  box.append(el('p', {id: 'cp-covered'},
                `The path weighs ${fmtNs(c.path_ns)}: ${pct(c.path_ns, c.total_ns)} of ${fmtNs(c.total_ns)}${past}. The rest:`));
  const rows = COVERAGE_CAUSES.filter(([key]) => c.rest[key] !== 0).map(([key, , title, color]) => ({
    name: title, ns: c.rest[key], pct: pct(c.rest[key], c.total_ns), color,
    extra: key === 'threads_not_connected_ns' ? ` (${c.threads_not_connected} threads)` : '',
  }));
  box.append(sortableTable([
    {key: 'name', title: 'not on the path', cell: (td, r) => {
      if (r.color) td.append(el('span', {class: 'cp-swatch', style: `${SWATCH}background:${r.color}`}));
      td.append(`${r.name}${r.extra}`);
    }},
    {key: 'ns', title: 'time', num: true, fmt: fmtNs}, {key: 'pct', title: '% of the step'},
  ], rows, {id: 'cp-coverage'}));
}

// cp: the endpoint's JSON; ctx: the panels' context (onJump, offset, laneTitle);
// query: {step, instance}; onQuery(query) asks for another step; onHighlight(bool) marks the path.
export function renderCriticalPath(box, cp, ctx, {query, onQuery, onHighlight, highlighted}) {
  box.textContent = '';
  const step = el('input', {id: 'cp-step', value: query.step, spellcheck: 'false', size: 24});
  const inst = el('input', {id: 'cp-instance', type: 'number', min: 0, value: query.instance, style: 'width:5em'});
  const go = el('button', {id: 'cp-go', onclick: () => onQuery({step: step.value, instance: Number(inst.value) || 0})}, 'find');
  const hl = el('input', {id: 'cp-highlight', type: 'checkbox', onchange: () => onHighlight(hl.checked)});
  hl.checked = !!highlighted && cp.ok;
  hl.disabled = !cp.ok;
  box.append(el('div', {class: 'controls'}, el('label', {}, 'step containing ', step), el('label', {}, ' instance ', inst), go,
                el('label', {}, hl, ' highlight the path in the timeline')));
  if (!cp.ok) {
    box.append(el('p', {class: 'muted', id: 'cp-error'}, `No critical path: ${cp.error}`));
  } else {
    box.append(el('p', {id: 'cp-headline'},
                  `${cp.step || 'whole trace'}: path ${fmtNs(cp.length_ns)} through ${cp.path_slices} events ` +
                  `(${cp.path_edges} edges; graph ${cp.graph_nodes} nodes, ${cp.graph_edges} edges)`));
    box.append(el('h3', {}, 'What the path covers'));
    renderCoverage(box, cp);
    const rows = BOUND.map(([key, title]) => ({name: title, ns: cp.breakdown[key], pct: pct(cp.breakdown[key], cp.length_ns)}));
    box.append(el('h3', {}, 'What bounds the path'));
    box.append(sortableTable([
      {key: 'name', title: 'bound by'}, {key: 'ns', title: 'time', num: true, fmt: fmtNs}, {key: 'pct', title: '% of path'},
    ], rows, {id: 'cp-breakdown'}));
    box.append(el('h3', {}, `Events on the path (${Math.min(cp.events.length, cp.events_total)} of ${cp.events_total}, most path time first)`));
    const list = el('ol', {class: 'cp-events', id: 'cp-events'});
    for (const e of cp.events) {
      list.append(el('li', {}, eventButton(e.event, ctx, {lane: true}),
                     el('span', {class: 'muted'}, ` · ${fmtNs(e.on_path_ns)} on the path · ${e.bound_by}`)));
    }
    box.append(list);
  }
  const idle = cp.idle_breakdown;
  if (idle && idle.streams.length) {
    box.append(el('h3', {}, `Idle time per stream (host wait, kernel wait under ${idle.consecutive_kernel_delay_us} us, other)`));
    const rows = idle.streams.map((s) => ({
      ...s, name: s.lane >= 0 && ctx.laneTitle ? ctx.laneTitle(s.lane) : `device ${s.device} stream ${s.stream}`,
    }));
    box.append(sortableTable([
      {key: 'name', title: 'stream'},
      {key: 'host_wait_ns', title: 'host wait', num: true, fmt: fmtNs},
      {key: 'host_wait_intervals', title: 'gaps', num: true},
      {key: 'kernel_wait_ns', title: 'kernel wait', num: true, fmt: fmtNs},
      {key: 'kernel_wait_intervals', title: 'gaps', num: true},
      {key: 'other_ns', title: 'other', num: true, fmt: fmtNs},
      {key: 'other_intervals', title: 'gaps', num: true},
    ], rows, {id: 'cp-idle', sort: {key: 'host_wait_ns', desc: true}}));
  }
}
