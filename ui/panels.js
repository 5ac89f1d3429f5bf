// The panels below the timeline: event details and dependency chain, box selection, search
// results. Each render* function fills one container; `ctx` gives {onJump, offset, laneTitle}.
import {fmtNs, el, colorFor} from './format.js';
import {shortName, shortNames} from './names.js';

const PAGE = 8;  // events listed per engine lane before paging

export function eventButton(ref, ctx, {lane = false} = {}) {
  const where = lane && ctx.laneTitle ? ` · ${ctx.laneTitle(ref.lane)}` : '';
  return el('button', {class: 'event-link', 'data-id': ref.id, 'data-name': ref.name, title: ref.name,
                       onclick: () => ctx.onJump(ref)},
            el('span', {class: 'swatch', style: `background:${colorFor(ref.name)}`}),
            (ctx.short || shortName)(ref.name), el('span', {class: 'muted'}, ` ${fmtNs(ref.dur)} @ ${fmtNs(ref.ts - ctx.offset)}${where}`));
}

// Rows of a slice's details table; `offset` is the time the axis counts from, `origin` (a decimal
// string of ns) the trace's start on its own clock: the start as the trace file has it is exact
// only in BigInt.
function detailRows(slice, offset, origin) {
  return [
    ['category', slice.category], ['kind', slice.kind], ['start', fmtNs(slice.ts - offset)],
    ['start in the trace file', origin ? fmtClock(BigInt(origin) + BigInt(slice.ts)) : ''],
    ['duration', fmtNs(slice.dur)], ['process', slice.process], ['thread / lane', slice.thread],
    ['External id', slice.external_id || ''], ['correlation', slice.correlation || ''],
    ['input shapes', slice.input_shapes], ['event index', slice.id],
  ];
}

// Args as an indented JSON block (the server sends them as JSON text).
export function argsBlock(slice) {
  let args = slice.args_json;
  try {
    args = JSON.stringify(JSON.parse(slice.args_json), null, 1);
  } catch (e) { /* shown as text */ }
  if (!args || args === '{}') return null;
  return el('details', {open: '', class: 'args'}, el('summary', {}, 'args'), el('pre', {}, args));
}

// An exact time on the trace's own clock (BigInt ns) as microseconds with 3 decimals, the way
// Kineto's JSON writes "ts".
function fmtClock(ns) {
  const sign = ns < 0n ? '-' : '';
  const a = ns < 0n ? -ns : ns;
  return `${sign}${a / 1000n}.${String(a % 1000n).padStart(3, '0')} us`;
}

export function detailsTable(slice, offset, origin) {
  const table = el('table', {class: 'kv'});
  for (const [k, v] of detailRows(slice, offset, origin)) {
    if (v === '' || v === null || v === undefined) continue;
    table.append(el('tr', {}, el('th', {}, k), el('td', {}, String(v))));
  }
  return table;
}

export function renderDetails(box, slice, chain, ctx) {
  // Short names that tell every listed event apart (names.js).
  const refs = [slice.parent, slice.launched_by, slice.runtime_call, ...slice.flows.map((f) => f.event)];
  if (chain) for (const level of chain.levels) refs.push(...level.events);
  ctx = {...ctx, short: shortNames(refs.filter(Boolean).map((r) => r.name))};
  box.textContent = '';
  box.dataset.selectedName = slice.name;
  box.dataset.selectedId = slice.id;
  box.append(el('h3', {}, slice.name), detailsTable(slice, ctx.offset, ctx.origin));
  const links = el('div', {class: 'links'});
  if (slice.parent) links.append(el('div', {}, 'inside ', eventButton(slice.parent, ctx)));
  if (slice.launched_by) links.append(el('div', {}, 'launched by ', eventButton(slice.launched_by, ctx)));
  if (slice.runtime_call) links.append(el('div', {}, 'runtime call ', eventButton(slice.runtime_call, ctx)));
  for (const f of slice.flows) {
    links.append(el('div', {}, `flow ${f.category} ${f.direction === 'out' ? 'to' : 'from'} `, eventButton(f.event, ctx)));
  }
  box.append(links);
  const args = argsBlock(slice);
  if (args) box.append(args);
  if (chain) box.append(renderChain(chain, ctx));
}

// The chain: op -> runtime -> device -> instructions first, by role; then what encloses the op,
// its Python frames folded into one row (a deep stack is 40+ frames).
function renderChain(chain, ctx) {
  const box = el('div', {class: 'chain', id: 'chain'});
  box.append(el('h4', {}, 'Dependency chain'));
  for (const role of ['upstream', 'selected', 'downstream']) {
    const levels = chain.levels.filter((l) => l.role === role && l.key !== 'enclosing');
    if (levels.length === 0) continue;
    const section = el('div', {class: `chain-role role-${role}`, 'data-role': role});
    section.append(el('div', {class: 'role-title'}, role));
    for (const level of levels) {
      const more = level.total > level.events.length ? ` (first ${level.events.length} of ${level.total})` : ` (${level.total})`;
      const list = el('div', {class: 'chain-level', 'data-level': level.key}, el('div', {class: 'level-title'}, level.title + more));
      if (level.by_lane && level.by_lane.length > 1) list.append(...laneGroups(level, ctx));
      else for (const e of level.events) list.append(eventButton(e, ctx));
      section.append(list);
    }
    box.append(section);
  }
  const enclosing = chain.levels.find((l) => l.key === 'enclosing');
  if (enclosing) box.append(renderEnclosing(enclosing, ctx));
  return box;
}

// The ops enclosing the chain's op, outermost first, with the Python frames among them folded
// into one expandable row where the first one stood.
function renderEnclosing(level, ctx) {
  const section = el('div', {class: 'chain-role role-enclosing', 'data-role': 'enclosing'},
                     el('div', {class: 'role-title'}, 'inside'));
  const list = el('div', {class: 'chain-level', 'data-level': level.key},
                  el('div', {class: 'level-title'}, `${level.title} (${level.total}, outermost first)`));
  const frames = level.events.filter((e) => e.kind === 'python_function');
  let fold = null;
  for (const e of level.events) {
    if (e.kind !== 'python_function') {
      list.append(eventButton(e, ctx));
      continue;
    }
    if (!fold) {
      const inner = frames[frames.length - 1];
      fold = el('details', {class: 'python-frames'},
                el('summary', {}, `${frames.length} Python frame${frames.length === 1 ? '' : 's'} (innermost: ${inner.name})`));
      list.append(fold);
    }
    fold.append(eventButton(e, ctx));
  }
  section.append(list);
  return section;
}

// A fan-out (an execution's instructions): one collapsible group per engine / DMA queue with
// its count, listing PAGE events at a time.
function laneGroups(level, ctx) {
  const byLane = new Map();
  for (const e of level.events) {
    if (!byLane.has(e.lane)) byLane.set(e.lane, []);
    byLane.get(e.lane).push(e);
  }
  return level.by_lane.map((g) => {
    const events = byLane.get(g.lane) || [];
    const body = el('div', {class: 'lane-events'});
    let page = 0;
    const pager = el('span', {class: 'pager'});
    const show = () => {
      body.textContent = '';
      for (const e of events.slice(page * PAGE, (page + 1) * PAGE)) body.append(eventButton(e, ctx));
      pager.textContent = '';
      const pages = Math.ceil(events.length / PAGE);
      if (pages <= 1) return;
      pager.append(el('button', {class: 'page-btn', disabled: page === 0 ? '' : null, onclick: () => {
        page--;
        show();
      }}, '‹'), ` ${page + 1} / ${pages} `, el('button', {class: 'page-btn', disabled: page + 1 >= pages ? '' : null, onclick: () => {
        page++;
        show();
      }}, '›'));
    };
    show();
    const listed = events.length < g.count ? `, ${events.length} listed` : '';
    return el('details', {class: 'lane-group', 'data-lane': g.lane},
              el('summary', {}, `${g.title} `, el('span', {class: 'count'}, `${g.count}${listed}`), ' ', pager), body);
  });
}

export function renderSelection(box, sel, offset) {
  box.textContent = '';
  box.append(el('h3', {}, `Selection: ${fmtNs(sel.t1 - sel.t0)} from ${fmtNs(sel.t0 - offset)}`));
  box.append(el('p', {}, `${sel.events} events, ${sel.names} distinct names, ${fmtNs(sel.time_ns)} of event time (clipped to the box)`));
  const t = el('table', {class: 'grid'}, el('tr', {}, el('th', {}, 'name'), el('th', {}, 'count'), el('th', {}, 'time')));
  for (const r of sel.rows) t.append(el('tr', {}, el('td', {}, r.name), el('td', {class: 'num'}, r.count), el('td', {class: 'num'}, fmtNs(r.time_ns))));
  box.append(t);
}

// Search results: one row per event with its lane and time; `current` (an index into all
// matches) is marked. `query` is {what, sort}; the start and duration headers order the matches
// (ctx.onSort('start' | 'dur')), longest first by duration.
export function renderSearch(box, query, result, current, ctx) {
  box.textContent = '';
  const shown = result.events.length;
  const from = result.offset || 0;
  const order = query.sort === 'dur' ? 'longest first' : 'by time';
  box.append(el('p', {}, `${result.total.toLocaleString()} events match ${query.what}` +
                         (result.total > shown ? ` (${from + 1}–${from + shown} ${order}; Enter / Shift+Enter step through all)` : ` (${order})`)));
  const header = (key, title) => el('th', {class: 'num sort', 'data-sort': key, title: key === 'dur' ? 'longest first' : 'by time',
                                           'aria-sort': query.sort === key ? (key === 'dur' ? 'descending' : 'ascending') : null,
                                           onclick: () => ctx.onSort && ctx.onSort(key)}, title);
  const table = el('table', {class: 'grid search-table'},
                   el('tr', {}, el('th', {}, '#'), el('th', {}, 'event'), el('th', {}, 'lane'), header('start', 'start'),
                      header('dur', 'duration')));
  result.events.forEach((e, i) => {
    const n = from + i;
    const tr = el('tr', {class: n === current ? 'current' : '', 'data-index': n, 'data-id': e.id, onclick: () => ctx.onJump(e, n)},
                  el('td', {class: 'num'}, n + 1), el('td', {}, e.name), el('td', {class: 'muted'}, ctx.laneTitle(e.lane)),
                  el('td', {class: 'num'}, fmtNs(e.ts - ctx.offset)), el('td', {class: 'num'}, fmtNs(e.dur)));
    table.append(tr);
  });
  box.append(table);
  const row = table.querySelector('tr.current');
  if (row) row.scrollIntoView({block: 'nearest'});
}
