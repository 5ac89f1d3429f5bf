// Sortable tables: the op table (key_averages rows, as `opscope report` computes them) and the
// comparison's diff table (as `opscope diff` computes it).
import {fmtNs, el} from './format.js';
import {shortNames} from './names.js';

// A table sortable by every column. columns: [{key, title, num, fmt, cell}]; sort: {key, desc}
// (the initial order); onSort(sort) is told of every change; filter(row) keeps rows; limit: rows
// shown until "show all" is clicked; rowKey(row) names a row (data-key); selected(row) marks it.
// table.refill(filter) redraws with another filter.
export function sortableTable(columns, rows, {onRow, sort, onSort, id, filter, limit, rowKey, selected} = {}) {
  const table = el('table', {class: 'grid sortable', id});
  let current = sort && columns.some((c) => c.key === sort.key) ? {...sort} : null;
  const head = el('tr');
  const body = el('tbody');
  const ths = columns.map((c) => {
    const th = el('th', {'data-key': c.key, class: c.num ? 'num' : '', title: c.help || null}, c.title);
    th.addEventListener('click', () => {
      current = current && current.key === c.key ? {key: c.key, desc: !current.desc} : {key: c.key, desc: !!c.num};
      fill();
      if (onSort) onSort(current);
    });
    head.append(th);
    return th;
  });
  table.append(el('thead', {}, head), body);
  let showAll = !limit;
  function fill() {
    const sorted = filter ? rows.filter(filter) : rows.slice();
    if (current) {
      const col = columns.find((c) => c.key === current.key);
      sorted.sort((a, b) => {
        const x = a[current.key];
        const y = b[current.key];
        const r = col.num ? x - y : String(x).localeCompare(String(y));
        return current.desc ? -r : r;
      });
    }
    for (const th of ths) {
      th.removeAttribute('aria-sort');
      if (current && th.dataset.key === current.key) th.setAttribute('aria-sort', current.desc ? 'descending' : 'ascending');
    }
    body.textContent = '';
    for (const r of showAll ? sorted : sorted.slice(0, limit)) {
      const tr = el('tr', {'data-name': r.name, 'data-key': rowKey ? rowKey(r) : null,
                           class: selected && selected(r) ? 'active' : null});
      for (const c of columns) {
        const td = el('td', {class: c.num ? 'num' : ''});
        if (c.cell) c.cell(td, r);
        else td.textContent = c.fmt ? c.fmt(r[c.key], r) : r[c.key];
        tr.append(td);
      }
      if (onRow) {
        tr.addEventListener('click', () => {
          for (const x of body.querySelectorAll('tr.active')) x.classList.remove('active');
          tr.classList.add('active');
          onRow(r);
        });
      }
      body.append(tr);
    }
    table.dataset.rows = String(sorted.length);
    if (!showAll && sorted.length > limit) {
      const more = el('button', {class: 'page-btn', onclick: () => {
        showAll = true;
        fill();
      }}, `show all ${sorted.length} rows`);
      body.append(el('tr', {class: 'more-rows'}, el('td', {colspan: columns.length}, more)));
    }
  }
  fill();
  table.refill = (f = filter) => {
    filter = f;
    fill();
  };
  return table;
}

// A name cell: templated names shortened (`short`: names.js's shortNames over the table's names,
// so that no two rows look alike), the full name on hover.
function nameCell(short) {
  return (td, r) => {
    const text = short(r.name);
    td.textContent = text;
    td.className = 'name-cell';
    if (text !== r.name || text.length > 70) td.title = r.name;
  };
}

// A case-insensitive regular expression (or, if it does not compile, a plain substring) test.
export function textFilter(text) {
  if (!text) return null;
  let re = null;
  try {
    re = new RegExp(text, 'i');
  } catch (e) {
    const lower = text.toLowerCase();
    return (s) => String(s).toLowerCase().includes(lower);
  }
  return (s) => re.test(String(s));
}

export const OP_COLUMNS = ['name', 'kind', 'count', 'self_cpu_ns', 'cpu_total_ns', 'cpu_avg_ns', 'self_device_ns',
                           'device_total_ns', 'device_avg_ns', 'input_shapes'];

// ops: /api/trace/N/ops. opts: {onRow, sort, onSort, filter (text), deviceAnnotations (bool)}.
// Device-side copies of annotations (a GPU "ProfilerStep*" beside the host one) are rows of
// key_averages too; they are left out unless deviceAnnotations, so each step name shows once.
export function renderOps(box, ops, opts) {
  box.textContent = '';
  const dev = ops.device || 'DEV';
  const columns = [
    {key: 'name', title: 'Name', cell: nameCell(shortNames(ops.rows.map((r) => r.name)))},
    {key: 'kind', title: 'Kind', help: 'cpu op, runtime call, kernel (device activity) or annotation'},
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
  const match = textFilter(opts.filter);
  const keep = (r) => (opts.deviceAnnotations || r.kind !== 'device annotation') && (!match || match(r.name));
  const sort = opts.sort || {key: ops.has_device_time ? 'device_total_ns' : 'cpu_total_ns', desc: true};
  const table = sortableTable(columns, rows, {onRow: opts.onRow, sort, onSort: opts.onSort, id: 'op-table', filter: keep});
  box.append(table);
  const hidden = rows.filter((r) => r.kind === 'device annotation').length;
  return {shown: Number(table.dataset.rows), total: rows.length, hiddenDeviceAnnotations: opts.deviceAnnotations ? 0 : hidden};
}

// diff: /api/diff (the rows and kernels of `opscope diff --json`).
export function renderDiff(box, diff, nameA, nameB) {
  box.textContent = '';
  const ta = diff.timeline_a;
  const tb = diff.timeline_b;
  box.append(el('p', {id: 'diff-timelines'},
                `A = ${nameA}: device busy ${fmtNs(ta.busy_ns)} of ${fmtNs(ta.total_ns)}, ${ta.activities} device executions; ` +
                `B = ${nameB}: device busy ${fmtNs(tb.busy_ns)} of ${fmtNs(tb.total_ns)}, ${tb.activities} device executions ` +
                `(${ta.activities} \u2192 ${tb.activities})`));
  const rows = diff.rows.map((r) => ({...r, device_delta: r.device_ns_b - r.device_ns_a}));
  const columns = [
    {key: 'name', title: 'op', cell: nameCell(shortNames(rows.map((r) => r.name)))}, {key: 'change', title: 'change'},
    {key: 'calls_a', title: 'calls A', num: true}, {key: 'calls_b', title: 'calls B', num: true},
    {key: 'executions_a', title: 'device exec. A', num: true, help: 'device activities the op launched directly'},
    {key: 'executions_b', title: 'device exec. B', num: true, help: 'device activities the op launched directly'},
    {key: 'cpu_ns_a', title: 'CPU A', num: true, fmt: fmtNs}, {key: 'cpu_ns_b', title: 'CPU B', num: true, fmt: fmtNs},
    {key: 'device_ns_a', title: 'device A', num: true, fmt: fmtNs, help: 'device time the op launched directly'},
    {key: 'device_ns_b', title: 'device B', num: true, fmt: fmtNs, help: 'device time the op launched directly'},
    {key: 'device_delta', title: 'device \u0394', num: true, fmt: fmtNs},
    {key: 'device_total_ns_a', title: 'device total A', num: true, fmt: fmtNs,
     help: 'device time under the op or annotation (key_averages device total)'},
    {key: 'device_total_ns_b', title: 'device total B', num: true, fmt: fmtNs,
     help: 'device time under the op or annotation (key_averages device total)'},
    {key: 'impact_ns', title: 'impact', num: true, fmt: fmtNs},
  ];
  box.append(sortableTable(columns, rows, {sort: {key: 'impact_ns', desc: true}, id: 'diff-table'}));
  box.append(...kernelDiff(diff.kernels || []));
}

// The kernel section of `opscope diff`: device activity by name, added, removed or changed (the
// count differs, or the total by more than 5% and 1 us), by impact.
function kernelDiff(kernels) {
  const n = (change) => kernels.filter((k) => k.change === change).length;
  const title = el('h4', {id: 'diff-kernels-title'},
                   `Kernels (device activity by name): ${n('added')} added, ${n('removed')} removed, ${n('changed')} changed`);
  if (!kernels.length) return [title];
  const columns = [
    {key: 'name', title: 'kernel', cell: nameCell(shortNames(kernels.map((k) => k.name)))}, {key: 'change', title: 'change'},
    {key: 'count_a', title: 'count A', num: true}, {key: 'count_b', title: 'count B', num: true},
    {key: 'total_ns_a', title: 'total A', num: true, fmt: fmtNs}, {key: 'total_ns_b', title: 'total B', num: true, fmt: fmtNs},
    {key: 'impact_ns', title: 'impact', num: true, fmt: fmtNs},
  ];
  return [title, sortableTable(columns, kernels, {sort: {key: 'impact_ns', desc: true}, id: 'diff-kernels', limit: 50})];
}
