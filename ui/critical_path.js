// The Critical path panel: HTA's critical path of one step (what bounds it, the events it runs
// through) and HTA's idle-time breakdown per stream, from /api/trace/N/critical_path. The
// "highlight" box marks every event on the path in the timeline (/marks?critical_path=1).
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
