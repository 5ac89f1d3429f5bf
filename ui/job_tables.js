// The job page's tables, from /api/job: findings, stragglers, ranks, the ranks x steps heatmap of
// sync wait, the collectives by name and size (as `opscope report` prints them) and every
// collective instance (sortable by any column, filtered by text), and the selected collective's
// members. Each render* fills its container; `app` gives {select(c), selectByKey(key),
// setView(t0, t1), isSelected(c)}.
import {fmtNs, el} from './format.js';
import {sortableTable} from './tables.js';
import {flatMembers, keyOf, signedFixed, toTs} from './job_timeline.js';

const $ = (id) => document.getElementById(id);

function table(headers, rows) {
  const t = el('table', {class: 'job'});
  t.append(el('tr', {}, ...headers.map(([h, left]) => el('th', {class: left ? 'l' : null}, h))));
  for (const cells of rows) {
    const tr = el('tr');
    cells.forEach((c, j) => tr.append(el('td', {class: headers[j][1] ? 'l' : null}, c)));
    t.append(tr);
  }
  return t;
}

// Bytes as the report prints them (decimal units).
export function fmtBytes(b) {
  if (!b) return '-';
  if (b >= 1e9) return `${(b / 1e9).toFixed(2)} GB`;
  if (b >= 1e6) return `${(b / 1e6).toFixed(2)} MB`;
  if (b >= 1e3) return `${(b / 1e3).toFixed(2)} KB`;
  return `${b} B`;
}

export function renderSummary(job, app) {
  const top = job.stragglers.find((s) => s.wait_caused_us > 0);
  const findings = $('job-findings');
  for (const f of job.findings) findings.append(el('li', {}, f));
  for (const w of job.warnings) findings.append(el('li', {class: 'muted'}, w));
  if (top && top.worst_seq >= 0) {
    const key = `${top.worst_group}:${top.worst_seq}`;
    findings.append(el('li', {}, `Rank ${top.rank} made the others wait longest at ${top.worst_group}#${top.worst_seq} (${fmtNs(top.worst_wait_us * 1e3)}): `,
                       el('a', {id: 'job-straggler-link', onclick: () => app.selectByKey(key)}, 'show it')));
  }
  $('job-stragglers').append(table(
      [['rank', true], ['times last'], ['wait caused'], ['worst instance', true]],
      job.stragglers.map((s) => [`rank ${s.rank}`, s.times_last, fmtNs(s.wait_caused_us * 1e3),
        s.worst_seq >= 0 ? el('a', {onclick: () => app.selectByKey(`${s.worst_group}:${s.worst_seq}`)}, `${s.worst_group}#${s.worst_seq}`) : '-'])));
  $('job-ranks').append(table(
      [['rank', true], ['clock offset'], ['drift ppm'], ['busy'], ['computation'], ['exposed comm'], ['overlap %'], ['file', true]],
      job.ranks.map((r) => [el('a', {href: `/#trace=${r.trace}`, target: '_blank'}, `rank ${r.rank}`),
        `${signedFixed(r.clock_offset_us, 3)} us`, signedFixed(r.clock_drift_ppm, 2), fmtNs(r.busy_us * 1e3), fmtNs(r.computation_us * 1e3),
        fmtNs(r.exposed_communication_us * 1e3), r.overlap_pct === null ? '-' : r.overlap_pct.toFixed(2), r.file])));
  renderHeatmap(job, app);
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
function renderHeatmap(job, app) {
  const {numbers, ranks} = job.steps;
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
                          onclick: () => app.setView(r.start[j] - d * 0.05, r.start[j] + d * 1.05)}));
    }
    t.append(tr);
  }
  box.append(t);
  if (cols.length < numbers.length) box.append(el('div', {class: 'muted'}, `first ${cols.length} of ${numbers.length} steps`));
  box.append(heatLegend(max));
}

// Per (collective, size), as the report prints it; a click filters the instances to that row.
export function renderCollectiveSummary(job, onRow) {
  const rows = job.collective_summary.map((s) => ({...s, busbw: s.busbw_gbps === null ? -1 : s.busbw_gbps}));
  const ns = (v) => fmtNs(v);
  $('job-collective-summary').append(sortableTable([
    {key: 'name', title: 'name'}, {key: 'bytes', title: 'bytes', num: true, fmt: fmtBytes},
    {key: 'count', title: 'count', num: true}, {key: 'mean_skew_ns', title: 'skew mean', num: true, fmt: ns},
    {key: 'median_skew_ns', title: 'skew median', num: true, fmt: ns}, {key: 'max_skew_ns', title: 'skew max', num: true, fmt: ns},
    {key: 'mean_transfer_ns', title: 'transfer mean', num: true, fmt: ns},
    {key: 'busbw', title: 'bus GB/s', num: true, fmt: (v) => (v < 0 ? '-' : v.toFixed(2))},
  ], rows, {id: 'job-summary-table', onRow, rowKey: (r) => `${r.name}:${r.bytes}`}));
}

// A filter's text: words that must all appear in "name group#seq size" (case-insensitive).
export function collectiveFilter(text) {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return null;
  return (c) => {
    const hay = `${c.name} ${c.group}#${c.seq} ${c.group}:${c.seq} ${c.bytes} ${fmtBytes(c.bytes)}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  };
}

// Rows of the instances table laid out at first: a few thousand rows of a dozen cells cost a
// second of layout; sorting and filtering always run over every instance, and "show all" lays
// out the rest.
const SHOWN_ROWS = 100;

// Every collective instance, largest skew first; sortable by any column, filtered by refill(f).
export function renderCollectives(job, app) {
  // Each row names its fields (a spread would make every collective's `members`: expandMembers).
  const rows = job.collectives.map((c, index) => ({
    group: c.group, seq: c.seq, name: c.name, bytes: c.bytes, skew_ns: c.skew_ns, transfer_ns: c.transfer_ns,
    index, ranks: flatMembers(c).length / 7, busbw: c.busbw_gbps === null ? -1 : c.busbw_gbps, last: c.last_rank,
  }));
  const box = $('job-collectives');
  box.textContent = '';
  const t = sortableTable([
    {key: 'group', title: 'group'}, {key: 'seq', title: 'seq', num: true}, {key: 'name', title: 'name'},
    {key: 'bytes', title: 'bytes', num: true, fmt: (v) => v || '-'}, {key: 'ranks', title: 'ranks', num: true},
    {key: 'skew_ns', title: 'skew', num: true, fmt: fmtNs}, {key: 'transfer_ns', title: 'transfer', num: true, fmt: fmtNs},
    {key: 'busbw', title: 'bus GB/s', num: true, fmt: (v) => (v < 0 ? '-' : v.toFixed(2))},
    {key: 'last', title: 'last rank', num: true, fmt: (v) => (v >= 0 ? v : '-')},
  ], rows, {id: 'job-collective-table', sort: {key: 'skew_ns', desc: true}, onRow: (r) => app.select(job.collectives[r.index]),
            rowKey: (r) => keyOf(r), selected: (r) => app.isSelected(r), limit: SHOWN_ROWS});
  box.append(t);
  return t;
}

function traceLink(r, ts0, ts1, slice) {
  const sel = slice >= 0 ? `&sel=${slice}` : '';
  return `/#trace=${r.trace}&t0=${Math.floor(ts0)}&t1=${Math.ceil(ts1)}${sel}`;
}

// The selected collective: each rank's arrival, sync wait and kernel, with a link to the kernel in
// its rank's own trace view (the rank's API times).
export function renderSelected(job, c, pad) {
  const box = $('job-selected');
  box.textContent = '';
  if (!c) return;
  const first = Math.min(...c.members.map((m) => m[4]));
  const rankOf = new Map(job.ranks.map((r) => [r.rank, r]));
  box.append(el('div', {}, `${c.name} ${c.group}#${c.seq}: ${c.members.length} ranks, skew ${fmtNs(c.skew_ns)}, ` +
                `transfer ${fmtNs(c.transfer_ns)}` + (c.last_rank >= 0 ? `, rank ${c.last_rank} arrived last` : '')));
  box.append(table([['rank', true], ['arrival'], ['sync wait'], ['kernel'], ['', true]],
                   c.members.map(([rank, slice, , , start, stop, wait]) => {
                     const r = rankOf.get(rank);
                     const link = r && slice >= 0 ? el('a', {href: traceLink(r, toTs(r, start - pad), toTs(r, stop + pad), slice), target: '_blank'}, 'in its trace') : '';
                     return [`rank ${rank}`, `+${fmtNs(start - first)}`, fmtNs(wait), fmtNs(stop - start), link];
                   })));
}
