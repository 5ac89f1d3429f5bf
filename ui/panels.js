// The panels below the timeline: event details and dependency chain, op table, summary,
// comparison diff table, search results. Each render* function fills one container.
import {fmtNs, el, colorFor} from './format.js';

function eventButton(ref, onJump, offset) {
  return el('button', {class: 'event-link', 'data-id': ref.id, 'data-name': ref.name,
                       onclick: () => onJump(ref)},
            el('span', {class: 'swatch', style: `background:${colorFor(ref.name)}`}),
            ref.name, el('span', {class: 'muted'}, ` ${fmtNs(ref.dur)} @ ${fmtNs(ref.ts - offset)}`));
}

export function renderDetails(box, slice, chain, onJump, offset) {
  box.textContent = '';
  box.dataset.selectedName = slice.name;
  box.dataset.selectedId = slice.id;
  box.append(el('h3', {}, slice.name));
  const rows = [
    ['category', slice.category], ['kind', slice.kind], ['start', fmtNs(slice.ts - offset)],
    ['duration', fmtNs(slice.dur)], ['process', slice.process], ['thread / lane', slice.thread],
    ['External id', slice.external_id || ''], ['correlation', slice.correlation || ''],
    ['input shapes', slice.input_shapes], ['event index', slice.id],
  ];
  const table = el('table', {class: 'kv'});
  for (const [k, v] of rows) {
    if (v === '' || v === null || v === undefined) continue;
    table.append(el('tr', {}, el('th', {}, k), el('td', {}, String(v))));
  }
  box.append(table);
  const links = el('div', {class: 'links'});
  if (slice.parent) links.append(el('div', {}, 'inside ', eventButton(slice.parent, onJump, offset)));
  if (slice.launched_by) links.append(el('div', {}, 'launched by ', eventButton(slice.launched_by, onJump, offset)));
  if (slice.runtime_call) links.append(el('div', {}, 'runtime call ', eventButton(slice.runtime_call, onJump, offset)));
  for (const f of slice.flows) {
    links.append(el('div', {}, `flow ${f.category} ${f.direction === 'out' ? 'to' : 'from'} `,
                    eventButton(f.event, onJump, offset)));
  }
  box.append(links);
  let args = slice.args_json;
  try {
    args = JSON.stringify(JSON.parse(slice.args_json), null, 1);
  } catch (e) { /* shown as text */ }
  if (args && args !== '{}') box.append(el('details', {open: ''}, el('summary', {}, 'args'), el('pre', {}, args)));
  if (chain) box.append(renderChain(chain, onJump, offset));
}

function renderChain(chain, onJump, offset) {
  const box = el('div', {class: 'chain', id: 'chain'});
  box.append(el('h4', {}, 'Dependency chain'));
  for (const role of ['upstream', 'selected', 'downstream']) {
    const levels = chain.levels.filter((l) => l.role === role);
    if (levels.length === 0) continue;
    const section = el('div', {class: `chain-role role-${role}`, 'data-role': role});
    section.append(el('div', {class: 'role-title'}, role));
    for (const level of levels) {
      const more = level.total > level.events.length ? ` (first ${level.events.length} of ${level.total})` : ` (${level.total})`;
      const list = el('div', {class: 'chain-level', 'data-level': level.key},
                      el('div', {class: 'level-title'}, level.title + more));
      for (const e of level.events) list.append(eventButton(e, onJump, offset));
      section.append(list);
    }
    box.append(section);
  }
  return box;
}

export function renderSelection(box, sel, offset) {
  box.textContent = '';
  box.append(el('h3', {}, `Selection: ${fmtNs(sel.t1 - sel.t0)} from ${fmtNs(sel.t0 - offset)}`));
  box.append(el('p', {}, `${sel.events} events, ${sel.names} distinct names, ${fmtNs(sel.time_ns)} of event time (clipped to the box)`));
  const t = el('table', {class: 'grid'}, el('tr', {}, el('th', {}, 'name'), el('th', {}, 'count'), el('th', {}, 'time')));
  for (const r of sel.rows) t.append(el('tr', {}, el('td', {}, r.name), el('td', {class: 'num'}, r.count), el('td', {class: 'num'}, fmtNs(r.time_ns))));
  box.append(t);
}

// A table sortable by every column. columns: [{key, title, num, fmt}]. Returns the element.
export function sortableTable(columns, rows, {onRow, initialSort, id} = {}) {
  const table = el('table', {class: 'grid sortable', id});
  let sortKey = initialSort || null;
  let desc = true;
  const head = el('tr');
  const body = el('tbody');
  const ths = columns.map((c) => {
    const th = el('th', {'data-key': c.key, class: c.num ? 'num' : ''}, c.title);
    th.addEventListener('click', () => {
      if (sortKey === c.key) desc = !desc;
      else {
        sortKey = c.key;
        desc = !!c.num;
      }
      fill();
    });
    head.append(th);
    return th;
  });
  table.append(el('thead', {}, head), body);
  function fill() {
    const sorted = rows.slice();
    if (sortKey) {
      const col = columns.find((c) => c.key === sortKey);
      sorted.sort((a, b) => {
        const x = a[sortKey];
        const y = b[sortKey];
        const r = col.num ? x - y : String(x).localeCompare(String(y));
        return desc ? -r : r;
      });
    }
    for (const th of ths) {
      th.removeAttribute('aria-sort');
      if (th.dataset.key === sortKey) th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
    }
    body.textContent = '';
    for (const r of sorted) {
      const tr = el('tr', {'data-name': r.name});
      for (const c of columns) tr.append(el('td', {class: c.num ? 'num' : ''}, c.fmt ? c.fmt(r[c.key], r) : r[c.key]));
      if (onRow) {
        tr.addEventListener('click', () => {
          for (const x of body.querySelectorAll('tr.active')) x.classList.remove('active');
          tr.classList.add('active');
          onRow(r);
        });
      }
      body.append(tr);
    }
  }
  fill();
  return table;
}

export function renderOps(box, ops, onRow) {
  box.textContent = '';
  const dev = ops.device || 'DEV';
  const columns = [
    {key: 'name', title: 'Name'},
    {key: 'count', title: '# of Calls', num: true},
    {key: 'self_cpu_ns', title: 'Self CPU', num: true, fmt: fmtNs},
    {key: 'cpu_total_ns', title: 'CPU total', num: true, fmt: fmtNs},
    {key: 'cpu_avg_ns', title: 'CPU time avg', num: true, fmt: fmtNs},
  ];
  if (ops.has_device_time) {
    columns.push({key: 'self_device_ns', title: `Self ${dev}`, num: true, fmt: fmtNs},
                 {key: 'device_total_ns', title: `${dev} total`, num: true, fmt: fmtNs},
                 {key: 'device_avg_ns', title: `${dev} time avg`, num: true, fmt: fmtNs});
  }
  if (ops.grouped_by_input_shape) columns.push({key: 'input_shapes', title: 'Input Shapes'});
  const rows = ops.rows.map((r) => ({...r, cpu_avg_ns: r.count ? r.cpu_total_ns / r.count : 0,
                                     device_avg_ns: r.count ? r.device_total_ns / r.count : 0}));
  box.append(sortableTable(columns, rows, {onRow, initialSort: ops.has_device_time ? 'device_total_ns' : 'cpu_total_ns', id: 'op-table'}));
}

export function renderSummary(box, s, onJump, offset) {
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
    ], s.top_ops, {initialSort: 'device_ns'}));
  }
  if (s.gaps.count) {
    box.append(el('h3', {}, 'Gaps between device executions'));
    box.append(el('p', {}, `${s.gaps.count} gaps, ${fmtNs(s.gaps.total_ns)} in all, mean ${fmtNs(s.gaps.mean_ns)}, longest ${fmtNs(s.gaps.max_ns)}`));
    const list = el('ul', {class: 'gaps'});
    for (const g of s.gaps.largest) {
      list.append(el('li', {}, `${fmtNs(g.dur)} at ${fmtNs(g.ts - offset)} after `, eventButton(g.before, onJump, offset)));
    }
    box.append(list);
  }
}

export function renderDiff(box, diff, nameA, nameB) {
  box.textContent = '';
  box.append(el('p', {}, `A = ${nameA}: device busy ${fmtNs(diff.timeline_a.busy_ns)} of ${fmtNs(diff.timeline_a.total_ns)}; ` +
                         `B = ${nameB}: device busy ${fmtNs(diff.timeline_b.busy_ns)} of ${fmtNs(diff.timeline_b.total_ns)}`));
  const rows = diff.rows.map((r) => ({...r, device_delta: r.device_ns_b - r.device_ns_a, cpu_delta: r.cpu_ns_b - r.cpu_ns_a}));
  box.append(sortableTable([
    {key: 'name', title: 'op'}, {key: 'change', title: 'change'},
    {key: 'calls_a', title: 'calls A', num: true}, {key: 'calls_b', title: 'calls B', num: true},
    {key: 'cpu_ns_a', title: 'CPU A', num: true, fmt: fmtNs}, {key: 'cpu_ns_b', title: 'CPU B', num: true, fmt: fmtNs},
    {key: 'device_ns_a', title: 'device A', num: true, fmt: fmtNs}, {key: 'device_ns_b', title: 'device B', num: true, fmt: fmtNs},
    {key: 'device_delta', title: 'device Δ', num: true, fmt: fmtNs}, {key: 'impact_ns', title: 'impact', num: true, fmt: fmtNs},
  ], rows, {initialSort: 'impact_ns', id: 'diff-table'}));
}

export function renderSearch(box, q, result, onJump, offset) {
  box.textContent = '';
  box.append(el('p', {}, `${result.total} events match /${q}/` + (result.total > result.events.length ? ` (first ${result.events.length} by time)` : '')));
  const list = el('div', {class: 'search-results'});
  for (const e of result.events) list.append(eventButton(e, onJump, offset));
  box.append(list);
}
