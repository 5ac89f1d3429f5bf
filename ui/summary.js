// The Summary panel, from /api/trace/N/summary: the findings, then the `opscope report` figures
// they cite (device timeline, ops by device time, top kernels, launch statistics) and the idle
// gaps. `figures` is exactly what `opscope report --json` prints for the trace.
import {fmtNs, el} from './format.js';
import {shortNames} from './names.js';
import {sortableTable} from './tables.js';
import {eventButton} from './panels.js';

const pct = (part, whole) => (whole > 0 ? `${((100 * part) / whole).toFixed(2)}%` : '-');

export function renderSummary(box, s, ctx) {
  box.textContent = '';
  const f = s.figures;
  box.append(el('h3', {}, 'Findings'));
  const ul = el('ul', {class: 'findings'});
  for (const text of s.findings) ul.append(el('li', {}, text));
  box.append(ul);
  const tl = f.device_timeline;
  if (tl.activities > 0) box.append(...timeline(tl, f.device_type));
  if (s.gaps.count) box.append(...gaps(s.gaps, ctx));
  if (f.ops.rows.length) box.append(...ops(f.ops));
  if (f.kernels.rows.length) box.append(...kernels(f.kernels));
  if (f.launches.by_name.length) box.append(...launches(f.launches));
  box.append(el('p', {class: 'muted'}, 'These figures are those of `opscope report --json` for this trace (same code, same definitions).'));
}

function timeline(tl, device) {
  const busyPct = tl.total_ns ? (100 * tl.busy_ns) / tl.total_ns : 0;
  const rows = [
    ['total', tl.total_ns], ['busy', tl.busy_ns], ['idle', tl.idle_ns], ['computation', tl.computation_ns],
    ['exposed communication', tl.exposed_comm_ns], ['exposed memcpy', tl.exposed_memcpy_ns],
    ['communication (all)', tl.total_comm_ns], ['memcpy (all)', tl.total_memcpy_ns],
  ];
  const table = el('table', {class: 'grid', id: 'summary-timeline'});
  for (const [label, ns] of rows) {
    table.append(el('tr', {}, el('td', {}, label), el('td', {class: 'num'}, fmtNs(ns)), el('td', {class: 'num'}, pct(ns, tl.total_ns))));
  }
  const left = tl.unlinked_activities ? `; ${tl.unlinked_activities} with no runtime call or op left out, as TraceLens does` : '';
  return [el('h3', {}, `${device || 'Device'} timeline (${tl.activities} activities${left})`),
          el('div', {class: 'busybar'}, el('div', {class: 'busy', style: `width:${busyPct.toFixed(1)}%`})), table];
}

function gaps(g, ctx) {
  const list = el('ul', {class: 'gaps'});
  for (const gap of g.largest) list.append(el('li', {}, `${fmtNs(gap.dur)} at ${fmtNs(gap.ts - ctx.offset)} after `, eventButton(gap.before, ctx)));
  return [el('h3', {}, 'Idle gaps between device activities'),
          el('p', {}, `${g.count} gaps, ${fmtNs(g.total_ns)} in all (the idle time above), mean ${fmtNs(g.mean_ns)}, longest ${fmtNs(g.max_ns)}`), list];
}

function ops(o) {
  const rows = o.rows.map((r) => ({...r}));
  return [el('h3', {}, `Ops by device time (direct: launched by the op itself; ${o.unattributed_activities} activities with no launcher)`),
          sortableTable([
            {key: 'name', title: 'op'}, {key: 'calls', title: 'calls', num: true}, {key: 'count', title: 'launching calls', num: true},
            {key: 'direct_activities', title: 'activities', num: true},
            {key: 'direct_device_ns', title: 'device time (direct)', num: true, fmt: fmtNs},
            {key: 'subtree_device_ns', title: 'device time (subtree)', num: true, fmt: fmtNs},
          ], rows, {sort: {key: 'direct_device_ns', desc: true}, id: 'summary-ops', limit: 15})];
}

function kernels(k) {
  const rows = k.rows.map((r) => ({...r, parent_op: r.parent_op || '(no launcher)'}));
  const shortName = shortNames(rows.map((r) => r.kernel));
  return [el('h3', {}, `Top kernels by total time (${k.rows.length} groups, ${fmtNs(k.total_ns)} total)`),
          sortableTable([
            {key: 'sum_ns', title: 'total', num: true, fmt: fmtNs}, {key: 'count', title: 'count', num: true},
            {key: 'mean_ns', title: 'mean', num: true, fmt: fmtNs}, {key: 'stream', title: 'stream', num: true},
            {key: 'parent_op', title: 'parent op'},
            {key: 'kernel', title: 'kernel', cell: (td, r) => {
              td.textContent = shortName(r.kernel);
              td.title = r.kernel;
            }},
          ], rows, {sort: {key: 'sum_ns', desc: true}, id: 'summary-kernels', limit: 15})];
}

function launches(l) {
  const rows = l.by_name.map((r) => ({name: r.name, calls: r.duration.count, dur_mean: r.duration.mean_ns, dur_p50: r.duration.p50_ns,
                                      dur_p99: r.duration.p99_ns, delay_mean: r.launch_delay.mean_ns,
                                      delay_p50: r.launch_delay.p50_ns, delay_p99: r.launch_delay.p99_ns}));
  return [el('h3', {}, `Launch statistics (${l.duration.count} runtime calls, ${l.unlinked_activities} device activities without one)`),
          sortableTable([
            {key: 'name', title: 'runtime call'}, {key: 'calls', title: 'calls', num: true},
            {key: 'dur_mean', title: 'duration mean', num: true, fmt: fmtNs}, {key: 'dur_p99', title: 'p99', num: true, fmt: fmtNs},
            {key: 'delay_mean', title: 'launch delay mean', num: true, fmt: fmtNs}, {key: 'delay_p99', title: 'p99', num: true, fmt: fmtNs},
          ], rows, {sort: {key: 'calls', desc: true}, id: 'summary-launches', limit: 15})];
}
