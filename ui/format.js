// Time formatting and colours shared by the views.

// "12.345 us" / "1.234 ms" / "830 ns" for a duration in nanoseconds.
export function fmtNs(ns) {
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
  return Math.round(ns) + ' ns';
}

// A short tick label for a time offset, with precision suited to the tick step.
export function fmtTick(ns, step) {
  if (step >= 1e9) return (ns / 1e9).toFixed(Math.max(0, 3 - Math.round(Math.log10(step / 1e6)))) + ' s';
  if (step >= 1e6) return (ns / 1e6).toFixed(Math.max(0, 6 - Math.round(Math.log10(step)))) + ' ms';
  if (step >= 1e3) return (ns / 1e3).toFixed(Math.max(0, 3 - Math.round(Math.log10(step)))) + ' us';
  return Math.round(ns) + ' ns';
}

function hashString(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

const colorCache = new Map();
// A stable colour per name (or per external id when colouring by issuing op).
export function colorFor(key) {
  let c = colorCache.get(key);
  if (!c) {
    const h = hashString(String(key));
    const hue = h % 360;
    const sat = 45 + ((h >>> 9) % 30);
    const light = 55 + ((h >>> 17) % 15);
    c = `hsl(${hue} ${sat}% ${light}%)`;
    if (colorCache.size > 5000) colorCache.clear();
    colorCache.set(key, c);
  }
  return c;
}

export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
}

// Builds an element: el('div', {class: 'x', onclick: f}, 'text', child...).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Colours of the "colour by kind" mode, one per activity kind the server names.
export const KIND_COLORS = {
  cpu_op: '#6f9fd8', user_annotation: '#a98bdc', python_function: '#b9c1cf', runtime: '#e3a349',
  driver: '#d48c3c', kernel: '#3f9e62', memcpy: '#d65c5c', memset: '#d982aa', device_annotation: '#9aa3dd',
  instruction: '#3fa3a3', collective: '#c9a227', sync: '#e27a55', overhead: '#9a9a9a', other: '#b0b0b0',
};

export function kindColor(kind) {
  return KIND_COLORS[kind] || KIND_COLORS.other;
}
