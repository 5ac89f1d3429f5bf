// The Summary panel: findings, device busy/idle, top ops by device time and the idle gaps,
// from /api/trace/N/summary.
import {fmtNs, el} from './format.js';
import {sortableTable} from './tables.js';
import {eventButton} from './panels.js';

export function renderSummary(box, s, ctx) {
  box.textContent = '';
  const tl = s.timeline;
  const busyPct = tl.total_ns ? (100 * tl.busy_ns) / tl.total_ns : 0;
  box.append(el('h3', {}, 'Findings'));
  const ul = el('ul', {class: 'findings'});
  for (const f of s.findings) ul.append(el('li', {}, f));
  box.append(ul);
  if (tl.activities > 0) {
    box.append(el('h3', {}, 'Device busy / idle'));
    const bar = el('div', {class: 'busybar'}, el('div', {class: 'busy', style: `width:${busyPct.toFixed(1)}%`}));
    box.append(bar, el('p', {}, `busy ${fmtNs(tl.busy_ns)} (${busyPct.toFixed(1)}%), idle ${fmtNs(tl.idle_ns)}, span ${fmtNs(tl.total_ns)}`));
  }
  if (s.top_ops.length) {
    box.append(el('h3', {}, 'Top ops by device time'));
    box.append(sortableTable([
      {key: 'name', title: 'op'}, {key: 'calls', title: 'calls', num: true},
      {key: 'device_ns', title: 'device time (direct)', num: true, fmt: fmtNs},
      {key: 'subtree_device_ns', title: 'device time (subtree)', num: true, fmt: fmtNs},
    ], s.top_ops, {sort: {key: 'device_ns', desc: true}}));
  }
  if (s.gaps.count) {
    box.append(el('h3', {}, 'Gaps between device executions'));
    box.append(el('p', {}, `${s.gaps.count} gaps, ${fmtNs(s.gaps.total_ns)} in all, mean ${fmtNs(s.gaps.mean_ns)}, longest ${fmtNs(s.gaps.max_ns)}`));
    const list = el('ul', {class: 'gaps'});
    for (const g of s.gaps.largest) {
      list.append(el('li', {}, `${fmtNs(g.dur)} at ${fmtNs(g.ts - ctx.offset)} after `, eventButton(g.before, ctx)));
    }
    box.append(list);
  }
}
