// Short forms of C++ kernel and op names for lists and table cells. Only template argument lists
// and the parameter list of a templated function are shortened: "void foo<float, 4>(int*)" ->
// "foo<…>(…)". A name with no template argument list comes back unchanged ("<built-in function
// launch>", "Memcpy DtoH (Device -> Pageable)", "aten::mm"), and "(anonymous namespace)" is kept.
// shortNames() shortens a list so that different names never look the same: names whose short
// forms collide keep more (their top-level template arguments, then every argument, then
// everything) until they differ. The full name goes in the element's title (on hover) and in the
// details panel.

const ELLIPSIS = '…';

// A '<' opening a template argument list follows a name character ("Kernel2<"), never a space,
// the start, or "operator" ("operator<" is a comparison).
function opensTemplate(s, i) {
  return i > 0 && /[\w\]]/.test(s[i - 1]) && !/operator\s*$/.test(s.slice(0, i));
}

// A '(' opening a parameter list follows a name or a closed template list ("foo(", "foo<…>("),
// never "::" ("::(anonymous namespace)") or the start.
function opensParams(s, i) {
  return i > 0 && /[\w>]/.test(s[i - 1]);
}

// The name at `level`: 0 elides every template argument and the parameter list, 1 keeps the
// top-level template arguments (nested lists elided), 2 keeps the template arguments whole and
// elides the parameters, 3 is the name itself. Characters at template depth d are kept while
// d <= the level's depth; the first hidden list shows as "<…>".
function shortAt(name, level) {
  if (level >= 3) return name;
  const shown = level === 0 ? 0 : level === 1 ? 1 : Infinity;
  let out = '';
  let angle = 0;  // depth in template argument lists
  let paren = 0;  // depth in an elided parameter list
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (paren > 0) {
      if (c === '(') paren++;
      else if (c === ')' && --paren === 0) out += ')';
      continue;
    }
    if (c === '<' && (angle > 0 || opensTemplate(name, i))) {
      angle++;
      if (angle <= shown) out += c;
      else if (angle === shown + 1) out += c + ELLIPSIS;
      continue;
    }
    if (c === '>' && angle > 0) {
      if (angle <= shown + 1) out += c;
      angle--;
      continue;
    }
    if (angle > shown) continue;
    if (c === '(' && angle === 0 && opensParams(name, i)) {
      out += '(' + ELLIPSIS;
      paren = 1;
      continue;
    }
    out += c;
  }
  return out.replace(/^void\s+/, '');
}

function hasTemplate(name) {
  for (let i = 0; i < name.length; i++) if (name[i] === '<' && opensTemplate(name, i)) return true;
  return false;
}

// At most `max` characters, cut in the middle (the end of a kernel name tells it apart as often
// as its start).
function fit(s, max) {
  if (s.length <= max) return s;
  const head = Math.ceil((max - 1) * 0.6);
  return s.slice(0, head) + ELLIPSIS + s.slice(s.length - (max - 1 - head));
}

// One name, shortened alone (may collide with another's short form: prefer shortNames).
export function shortName(name, max = 80) {
  const s = String(name);
  if (!hasTemplate(s)) return s;
  return fit(shortAt(s, 0), max);
}

// A function giving each of `names` a short form no other of them has (see above).
export function shortNames(names, max = 80) {
  const all = [...new Set([...names].map(String))];
  const level = new Map(all.map((n) => [n, hasTemplate(n) ? 0 : 3]));
  for (let round = 0; round < 3; round++) {
    const byShort = new Map();
    for (const n of all) {
      const s = fit(shortAt(n, level.get(n)), level.get(n) >= 3 ? Infinity : max);
      if (!byShort.has(s)) byShort.set(s, []);
      byShort.get(s).push(n);
    }
    let raised = false;
    for (const group of byShort.values()) {
      if (group.length < 2) continue;
      for (const n of group) {
        if (level.get(n) < 3) {
          level.set(n, level.get(n) + 1);
          raised = true;
        }
      }
    }
    if (!raised) break;
  }
  const short = new Map(all.map((n) => [n, level.get(n) >= 3 ? n : fit(shortAt(n, level.get(n)), max)]));
  return (name) => (short.has(String(name)) ? short.get(String(name)) : shortName(name, max));
}
