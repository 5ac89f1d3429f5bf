// The view kept in the URL hash, so a link opens the same view and editing the hash applies it:
//   trace, t0, t1 (ns), y (vertical scroll, px), collapsed (group keys), pinned and rows (lane
//   ids: pinned lanes, lanes with every row shown), sel (event), box and mark (t0,t1 ranges),
//   tab, q and qi (search and current match; re=1 a regular expression, qk its kind filter, qs=dur
//   longest first), color (name|kind), sort and opf (op table sort
//   "key:asc|desc" and filter), cmp (comparison traces "a,b[,c]"), align (comparison anchor).
// parseHash checks each value and returns messages for those it cannot use, never throwing.

import {SEARCH_KINDS} from './search.js';

export const TABS = ['details', 'device', 'ops', 'summary', 'neuron', 'compare', 'search', 'critical'];

function ints(text) {
  if (text === null || text === '') return [];
  const parts = text.split(',');
  return parts.every((p) => /^-?\d+$/.test(p.trim())) ? parts.map((p) => Number(p)) : null;
}

function range(p, key, errors) {
  if (!p.has(key)) return undefined;
  const v = ints(p.get(key));
  if (!v || v.length !== 2 || !(v[1] > v[0])) {
    errors.push(`${key}=${p.get(key)} is not a time range "t0,t1" with t1 > t0 (ignored)`);
    return undefined;
  }
  return {t0: v[0], t1: v[1]};
}

// Returns {view, errors}. `view` holds only the keys present and valid; numTraces bounds trace
// indices. Values that need the trace (lane ids, group keys, event ids) are checked later.
export function parseHash(hash, numTraces) {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const view = {};
  const errors = [];
  const int = (key, lo, hi) => {
    if (!p.has(key)) return undefined;
    const text = p.get(key);
    const v = Number(text);
    if (text === '' || !Number.isInteger(v) || v < lo || v > hi) {
      errors.push(`${key}=${text} is not valid` + (hi < Infinity ? ` (expected ${lo}..${hi})` : ''));
      return undefined;
    }
    return v;
  };
  view.trace = int('trace', 0, numTraces - 1);
  if (p.has('t0') || p.has('t1')) {
    const t0 = Number(p.get('t0'));
    const t1 = Number(p.get('t1'));
    if (p.get('t0') === '' || p.get('t1') === '' || !Number.isFinite(t0) || !Number.isFinite(t1) || !(t1 > t0)) {
      errors.push(`t0=${p.get('t0')}, t1=${p.get('t1')} is not a time range with t1 > t0 (showing the whole trace)`);
    } else {
      view.t0 = t0;
      view.t1 = t1;
    }
  }
  view.y = int('y', 0, Infinity);
  view.sel = int('sel', 0, Infinity);
  view.qi = int('qi', 0, Infinity);
  view.box = range(p, 'box', errors);
  view.mark = range(p, 'mark', errors);
  if (p.has('tab')) {
    if (TABS.includes(p.get('tab'))) view.tab = p.get('tab');
    else errors.push(`tab=${p.get('tab')} is not a tab (${TABS.join(', ')})`);
  }
  if (p.has('q')) view.q = p.get('q');
  if (p.has('re')) view.re = p.get('re') === '1';
  if (p.has('qk')) {
    if (SEARCH_KINDS.includes(p.get('qk'))) view.qk = p.get('qk');
    else errors.push(`qk=${p.get('qk')} is not a kind of event (${SEARCH_KINDS.join(', ')})`);
  }
  if (p.has('qs')) {
    if (['start', 'dur'].includes(p.get('qs'))) view.qs = p.get('qs');
    else errors.push(`qs=${p.get('qs')} is not an order (start, dur)`);
  }
  if (p.has('align')) view.align = p.get('align');
  if (p.has('opf')) view.opf = p.get('opf');
  if (p.has('color')) {
    if (['name', 'kind'].includes(p.get('color'))) view.color = p.get('color');
    else errors.push(`color=${p.get('color')} is not a colour mode (name, kind)`);
  }
  if (p.has('sort')) {
    const m = /^([a-z_]+)(?::(asc|desc))?$/.exec(p.get('sort'));
    if (m) view.sort = {key: m[1], desc: m[2] !== 'asc'};
    else errors.push(`sort=${p.get('sort')} is not "column:asc" or "column:desc"`);
  }
  if (p.has('collapsed')) view.collapsed = p.get('collapsed') === '' ? [] : p.get('collapsed').split(',');
  for (const key of ['pinned', 'rows']) {
    if (!p.has(key)) continue;
    const v = ints(p.get(key));
    if (v) view[key] = v;
    else errors.push(`${key}=${p.get(key)} is not a list of lane ids`);
  }
  if (p.has('cmp')) {
    const v = ints(p.get('cmp'));
    if (v && v.length >= 2 && v.length <= 3 && v.every((i) => i >= 0 && i < numTraces) && v[0] !== v[1]) {
      view.cmp = v;
    } else {
      errors.push(`cmp=${p.get('cmp')} is not two or three different open traces (0..${numTraces - 1})`);
    }
  }
  return {view, errors};
}

// The hash for a view object (the same keys parseHash returns); undefined/null keys are left out.
export function formatHash(v) {
  const p = new URLSearchParams();
  const put = (k, x) => {
    if (x !== undefined && x !== null && x !== '') p.set(k, String(x));
  };
  put('trace', v.trace);
  if (v.t0 !== undefined) {
    put('t0', Math.floor(v.t0));
    put('t1', Math.ceil(v.t1));
  }
  if (v.y) put('y', Math.round(v.y));
  if (v.collapsed) p.set('collapsed', v.collapsed.join(','));
  if (v.pinned && v.pinned.length) put('pinned', v.pinned.join(','));
  if (v.rows && v.rows.length) put('rows', v.rows.join(','));
  put('sel', v.sel);
  if (v.box) put('box', `${v.box.t0},${v.box.t1}`);
  if (v.mark) put('mark', `${Math.floor(v.mark.t0)},${Math.ceil(v.mark.t1)}`);
  put('tab', v.tab);
  put('q', v.q);
  if (v.q) {
    put('qi', v.qi);
    if (v.re) put('re', 1);
    if (v.qk && v.qk !== 'all') put('qk', v.qk);
    if (v.qs === 'dur') put('qs', 'dur');
  }
  if (v.color && v.color !== 'name') put('color', v.color);
  if (v.sort) put('sort', `${v.sort.key}:${v.sort.desc ? 'desc' : 'asc'}`);
  put('opf', v.opf);
  if (v.cmp) put('cmp', v.cmp.join(','));
  put('align', v.align);
  return '#' + p.toString();
}
