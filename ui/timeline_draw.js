// Drawing of a Timeline on its canvas: time grid and axis, lanes with sticky labels and group
// headers, events (merged blocks translucent), search matches, the selection, chain arrows,
// the marked range, annotations, the critical path's coverage and the vertical scrollbar. Every function reads the timeline's
// state and records hit areas (tl.rects, tl.controls) in canvas coordinates.
import {fmtNs, fmtTick} from './format.js';
import {AXIS_H, GROUP_H, ROW_H} from './lanes.js';
import {drawMemoryLane} from './memory_lane.js';

export const LABEL_W = 240;
export const SCROLLBAR_W = 8;
export const ANNOTATION_H = 18;  // the strip under the axis holding the annotations' labels
const FONT = '11px system-ui, sans-serif';
const BOLD = 'bold 12px system-ui, sans-serif';

// Tick step (1, 2 or 5 x 10^k ns) for about one label per 110 px.
export function tickStep(span, width) {
  const target = span / Math.max(1, width / 110);
  const pow = Math.pow(10, Math.floor(Math.log10(target)));
  return [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= target) || pow * 10;
}

export function drawTimeline(tl) {
  const ctx = tl.ctx;
  ctx.setTransform(tl.dpr, 0, 0, tl.dpr, 0, 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, tl.width, tl.height);
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  tl.rects = [];
  tl.controls = [];
  tl.memoryPeaks = [];  // {lane, label, x, y, bytes, ts} of each peak drawn
  tl.drawnNames = new Map();
  tl.drawnKinds = new Set();
  tl.labelTexts = new Map();  // lane id -> its label as drawn (fitted), for tests
  const top = tl.scrollTop();
  // The scrolling area, then the pinned strip over it.
  area(tl, top, tl.height, false);
  if (tl.layout.pinnedH > 0) {
    area(tl, tl.lanesTop(), top, true);
    ctx.fillStyle = '#b9c3d6';
    ctx.fillRect(0, top - 2, tl.width, 2);
  }
  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, AXIS_H, tl.width - LABEL_W, tl.height - AXIS_H);
  ctx.clip();
  drawAnnotations(tl);
  drawCoverage(tl);
  drawMarkRange(tl);
  drawChain(tl);
  drawBox(tl);
  if (tl.overlay) tl.overlay(tl);  // a view's own marks over the lanes (the job's collective)
  ctx.restore();
  drawAxis(tl);
  drawScrollbar(tl);
}

// One vertical area [y0, y1): the pinned strip or the scrolling lanes with their headers.
function area(tl, y0, y1, pinned) {
  const ctx = tl.ctx;
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, y0, tl.width, y1 - y0);
  ctx.clip();
  const shown = [];
  for (const [id, L] of tl.layout.lanes) {
    if (L.pinned !== pinned) continue;
    const y = tl.screenY(L);
    if (y + L.h < y0 || y > y1) continue;
    shown.push([id, L, y]);
  }
  let alt = false;
  for (const [, L, y] of shown) {
    alt = !alt;
    ctx.fillStyle = alt ? '#fafbfd' : '#f3f5f9';
    ctx.fillRect(0, y, tl.width, L.h);
  }
  drawGrid(tl, y0, y1);
  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, y0, tl.width - LABEL_W, y1 - y0);
  ctx.clip();
  for (const [id, L, y] of shown) {
    if (L.lane.counter) drawCounter(tl, L, y, tl.data ? tl.data.counters.get(id) || [] : []);
    else if (L.lane.memory) drawMemoryLane(tl, id, L, y, tl.data ? tl.data.memory.get(id) || [] : [], LABEL_W);
    else drawItems(tl, id, L, y);
  }
  ctx.restore();
  for (const [id, L, y] of shown) drawLabel(tl, id, L, y, y0);
  if (!pinned) drawHeaders(tl, y0);
  ctx.restore();
}

function drawGrid(tl, y0, y1) {
  const ctx = tl.ctx;
  const step = tickStep(tl.t1 - tl.t0, tl.trackWidth());
  const first = Math.ceil((tl.t0 - tl.offset) / step) * step + tl.offset;
  ctx.strokeStyle = '#e6e9ef';
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let i = 0, t = first; t < tl.t1; t = first + ++i * step) {
    const x = Math.round(tl.xOf(t)) + 0.5;
    ctx.moveTo(x, y0);
    ctx.lineTo(x, y1);
  }
  ctx.stroke();
}

function drawItems(tl, id, L, y0) {
  const ctx = tl.ctx;
  const items = tl.data ? tl.data.lanes.get(id) : null;
  if (!items) return;
  const width = tl.trackWidth();
  const scale = width / (tl.t1 - tl.t0);
  const right = LABEL_W + width;
  const t0 = tl.t0;
  const strings = tl.data.strings;
  // Colour by name: one look-up per name and view, not per event (a view draws tens of thousands).
  const byName = tl.colorBy === 'name' ? (tl.data.colors ||= new Map()) : null;
  let alpha = 1;
  ctx.globalAlpha = 1;
  // The canvas parses every colour assigned to fillStyle, the same one too: assigned only when it
  // changes (neighbouring items mostly share a name).
  let fill = null;
  for (const it of items) {
    const row = it[2];
    if (row >= L.shown) continue;
    let x = LABEL_W + (it[0] - t0) * scale;
    let w = Math.max(it[1] * scale, 1);
    if (x + w < LABEL_W || x > right) continue;
    if (x < LABEL_W) {
      w -= LABEL_W - x;
      x = LABEL_W;
    }
    const [, , , nameIdx, sid, count, ext, , kind] = it;
    const y = y0 + row * ROW_H;
    const name = strings[nameIdx];
    let color = byName ? byName.get(nameIdx) : undefined;
    if (color === undefined) {
      color = tl.itemColor(name, ext, kind);
      if (byName) byName.set(nameIdx, color);
    }
    const a = count > 1 ? 0.55 : 1;
    if (a !== alpha) ctx.globalAlpha = alpha = a;
    if (color !== fill) ctx.fillStyle = fill = color;
    ctx.fillRect(x, y + 1, w, ROW_H - 2);
    if (tl.legend) {
      tl.drawnNames.set(name, (tl.drawnNames.get(name) || 0) + w);
      if (tl.kinds[kind]) tl.drawnKinds.add(tl.kinds[kind]);
    }
    if (w > 36) {
      ctx.globalAlpha = alpha = 1;
      ctx.fillStyle = fill = '#111';
      ctx.save();
      ctx.beginPath();
      ctx.rect(x, y, w - 2, ROW_H);
      ctx.clip();
      ctx.fillText(count > 1 ? `${count} × ${name}…` : name, x + 3, y + ROW_H / 2);
      ctx.restore();
    }
    if (sid === tl.selected && count === 1) {
      ctx.strokeStyle = '#e0115f';
      ctx.lineWidth = 3;
      ctx.strokeRect(x, y + 0.5, Math.max(w, 2), ROW_H - 1);
    }
    tl.rects.push({x, y, w, h: ROW_H, item: it, name, lane: id});
  }
  ctx.globalAlpha = 1;
  drawMatches(tl, id, L, y0, scale);
}

// Search / op-table matches: an outline and a bar on top of each matching event or block.
function drawMatches(tl, id, L, y0, scale) {
  const marks = tl.marks ? tl.marks.get(id) : null;
  if (!marks) return;
  const ctx = tl.ctx;
  for (const [ts, dur, row] of marks) {
    if (row >= L.shown) continue;
    const x = Math.max(LABEL_W, tl.xOf(ts));
    const w = Math.max(tl.xOf(ts) + dur * scale - x, 2);
    const y = y0 + row * ROW_H;
    ctx.fillStyle = '#ffb000';
    ctx.fillRect(x, y, w, 3);
    if (w >= 6) {
      ctx.strokeStyle = '#111';
      ctx.lineWidth = 1.5;
      ctx.strokeRect(x + 0.75, y + 1.25, w - 1.5, ROW_H - 2.5);
    }
  }
}

function drawCounter(tl, L, y0, points) {
  const ctx = tl.ctx;
  const lo = L.lane.min ?? 0;
  const hi = L.lane.max ?? 1;
  const span = hi - lo || 1;
  const yOf = (v) => y0 + L.h - 2 - ((v - lo) / span) * (L.h - 4);
  ctx.fillStyle = 'rgba(60, 140, 90, 0.35)';
  ctx.strokeStyle = 'rgb(40, 120, 70)';
  ctx.beginPath();
  let started = false;
  for (let i = 0; i < points.length; i++) {
    const [ts, , max] = points[i];
    const x = Math.max(LABEL_W, tl.xOf(ts));
    const next = i + 1 < points.length ? Math.min(tl.width, tl.xOf(points[i + 1][0])) : tl.width;
    if (!started) {
      ctx.moveTo(x, y0 + L.h);
      started = true;
    }
    ctx.lineTo(x, yOf(max));
    ctx.lineTo(next, yOf(max));
  }
  if (started) {
    ctx.lineTo(tl.width, y0 + L.h);
    ctx.closePath();
    ctx.fill();
    ctx.stroke();
  }
  ctx.fillStyle = '#333';
  ctx.fillText(`${hi.toPrecision(4)}`, LABEL_W + 4, y0 + 7);
}

// A lane's label stays on screen while any part of the lane is (below the sticky headers).
function drawLabel(tl, id, L, y, areaTop) {
  const ctx = tl.ctx;
  const stickyTop = areaTop + (L.pinned || !tl.layout.showGroups ? 0 : L.depth * GROUP_H);
  const ly = Math.max(y, Math.min(stickyTop, y + L.h - ROW_H));
  ctx.fillStyle = L.pinned ? '#fff4f8' : '#eef1f6';
  ctx.fillRect(0, y, LABEL_W - 4, L.h);
  const indent = 8 + (L.pinned ? 0 : Math.max(0, L.depth - 1) * 8);
  const suffix = tl.labelSuffix ? tl.labelSuffix.get(id) : null;
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, ly, LABEL_W - 26, ROW_H);
  ctx.clip();
  ctx.fillStyle = '#27303f';
  ctx.font = FONT;
  const tail = suffix ? `  ${suffix}` : '';
  const text = fitLabel(ctx, L.lane.title, LABEL_W - 28 - indent - ctx.measureText(tail).width) + tail;
  ctx.fillText(text, indent, ly + ROW_H / 2);
  if (tl.labelTexts) tl.labelTexts.set(id, text);
  ctx.restore();
  // Pin control at the label's right end.
  const px = LABEL_W - 22;
  const hover = tl.hoverLane === id;
  if (L.pinned || hover) {
    ctx.fillStyle = L.pinned ? '#e0115f' : '#8793a8';
    ctx.beginPath();
    ctx.arc(px + 8, ly + 6, 3.5, 0, 2 * Math.PI);
    ctx.fill();
    ctx.fillRect(px + 7.25, ly + 8, 1.5, 6);
  }
  tl.controls.push({x: px, y: ly, w: 18, h: ROW_H, action: 'pin', lane: id,
                    title: L.pinned ? 'unpin this lane' : 'pin this lane to the top'});
  const total = L.lane.rows;
  if (!L.lane.counter && total > L.shown) {
    rowsControl(tl, id, ly + ROW_H, `▸ ${total - L.shown} more rows`, indent, 'show every row of this lane');
  } else if (tl.layout.expanded.has(id) && L.h >= 2 * ROW_H) {
    rowsControl(tl, id, y + L.h - ROW_H, '▴ fewer rows', indent, 'collapse this lane to a few rows');
  }
}

const fitted = new Map();  // (width, text) -> fitted text

// A lane title fitted to `width` px: whole when it fits, else cut in the middle so that its end
// stays ("thread 12 (python3… · runtime → GPU 0" and "… · runtime" must not look the same): the
// last " · " part whole when it fits beside some of the start, else the end of the title.
export function fitLabel(ctx, text, width) {
  const key = `${Math.round(width)}|${text}`;
  let out = fitted.get(key);
  if (out !== undefined) return out;
  const fits = (s) => ctx.measureText(s).width <= width;
  if (fits(text)) {
    out = text;
  } else {
    const cut = text.lastIndexOf(' · ');
    const tail = cut > 0 ? text.slice(cut) : '';
    // The longest prefix (binary search on its length) that fits before "…" + tail.
    const longest = (make, n) => {
      let lo = 0;
      let hi = n;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (fits(make(mid))) lo = mid;
        else hi = mid - 1;
      }
      return make(lo);
    };
    if (tail && fits(text.slice(0, 4) + '…' + tail)) out = longest((k) => text.slice(0, k) + '…' + tail, cut);
    else out = longest((k) => '…' + text.slice(text.length - k), text.length);
  }
  if (fitted.size > 2000) fitted.clear();
  fitted.set(key, out);
  return out;
}

function rowsControl(tl, id, y, text, x, title) {
  const ctx = tl.ctx;
  ctx.fillStyle = '#1d5fbf';
  ctx.font = FONT;
  ctx.fillText(text, x, y + ROW_H / 2);
  const w = ctx.measureText(text).width;
  tl.controls.push({x: x - 2, y, w: w + 4, h: ROW_H, action: 'rows', lane: id, title});
}

// Group headers stick to the top of the area while their group is on screen, nested ones
// stacked below their parents'.
function drawHeaders(tl, areaTop) {
  const ctx = tl.ctx;
  for (const e of tl.layout.entries) {
    if (e.kind !== 'group') continue;
    const y = areaTop + e.y - tl.scrollY;
    const endY = areaTop + e.end - tl.scrollY;
    const sticky = areaTop + e.depth * GROUP_H;
    const hy = Math.max(y, Math.min(sticky, endY - GROUP_H));
    if (hy + GROUP_H < areaTop || hy > tl.height) continue;
    ctx.fillStyle = e.group.fill || (e.depth === 0 ? '#dde4f0' : '#e7ecf5');
    ctx.fillRect(0, hy, tl.width, GROUP_H);
    ctx.fillStyle = '#c5cfdf';
    ctx.fillRect(0, hy + GROUP_H - 1, tl.width, 1);
    ctx.fillStyle = '#1d2a44';
    ctx.font = BOLD;
    const label = `${e.collapsed ? '▸' : '▾'} ${e.group.title} (${e.count})`;
    ctx.fillText(label, 6 + e.depth * 10, hy + GROUP_H / 2);
    ctx.font = FONT;
    tl.controls.push({x: 0, y: hy, w: tl.width, h: GROUP_H, action: 'group', path: e.path,
                      title: e.collapsed ? 'expand this group' : 'collapse this group'});
  }
}

// Annotated ranges: a band over the lanes, the label in the strip above them (never over an
// event's own label). tl.annotationBoxes: where each label went, for tests.
function drawAnnotations(tl) {
  const ctx = tl.ctx;
  tl.annotationBoxes = [];
  if (!tl.annotations || !tl.annotations.length) return;
  ctx.fillStyle = '#f4f5f8';
  ctx.fillRect(LABEL_W, AXIS_H, tl.width - LABEL_W, ANNOTATION_H);
  for (const a of tl.annotations) {
    const x0 = Math.max(LABEL_W, tl.xOf(a.t0));
    const x1 = Math.min(tl.width, tl.xOf(a.t1));
    if (x1 <= x0) continue;
    ctx.fillStyle = a.color || 'rgba(120, 120, 140, 0.12)';
    ctx.fillRect(x0, AXIS_H, x1 - x0, tl.height - AXIS_H);
    ctx.save();
    ctx.beginPath();
    ctx.rect(x0, AXIS_H, x1 - x0, ANNOTATION_H);
    ctx.clip();
    ctx.fillStyle = '#3b4354';
    ctx.fillText(`${a.label} (${fmtNs(a.t1 - a.t0)})`, x0 + 4, AXIS_H + ANNOTATION_H / 2);
    ctx.restore();
    tl.annotationBoxes.push({label: a.label, x0, x1, y0: AXIS_H, y1: AXIS_H + ANNOTATION_H});
  }
}

// The critical path's coverage: the step's bounds, and each stretch the path leaves out shaded
// faintly down the lanes and in its cause's colour in a band under the axis.
const COVERAGE_BAND_H = 6;
function drawCoverage(tl) {
  const c = tl.coverage;
  if (!c) return;
  const ctx = tl.ctx;
  for (const g of c.gaps) {
    const x0 = Math.max(LABEL_W, tl.xOf(g.t0));
    const x1 = Math.min(tl.width, tl.xOf(g.t1));
    if (x1 <= x0 - 1) continue;
    const w = Math.max(1, x1 - x0);
    ctx.globalAlpha = 0.35;
    ctx.fillStyle = g.color;
    ctx.fillRect(x0, AXIS_H, w, tl.height - AXIS_H);
    ctx.globalAlpha = 1;
    ctx.fillRect(x0, AXIS_H, w, COVERAGE_BAND_H);
  }
  ctx.strokeStyle = '#5b6478';
  ctx.lineWidth = 1;
  ctx.setLineDash([4, 3]);
  ctx.beginPath();
  for (const t of [c.t0, c.t1]) {
    const x = Math.round(tl.xOf(t)) + 0.5;
    ctx.moveTo(x, AXIS_H);
    ctx.lineTo(x, tl.height);
  }
  ctx.stroke();
  ctx.setLineDash([]);
}

function drawMarkRange(tl) {
  const m = tl.markRange;
  if (!m) return;
  const ctx = tl.ctx;
  const x0 = tl.xOf(m.t0);
  const x1 = tl.xOf(m.t1);
  ctx.fillStyle = 'rgba(255, 190, 40, 0.16)';
  ctx.fillRect(x0, AXIS_H, Math.max(1, x1 - x0), tl.height - AXIS_H);
  ctx.strokeStyle = '#d08a00';
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(Math.round(x0) + 0.5, AXIS_H);
  ctx.lineTo(Math.round(x0) + 0.5, tl.height);
  ctx.moveTo(Math.round(x1) + 0.5, AXIS_H);
  ctx.lineTo(Math.round(x1) + 0.5, tl.height);
  ctx.stroke();
}

function drawBox(tl) {
  if (!tl.box) return;
  const ctx = tl.ctx;
  const x0 = tl.xOf(tl.box.t0);
  const x1 = tl.xOf(tl.box.t1);
  const y0 = tl.box.y0 - tl.scrollY;
  const y1 = tl.box.y1 - tl.scrollY;
  ctx.fillStyle = 'rgba(40, 110, 255, 0.15)';
  ctx.strokeStyle = 'rgba(40, 110, 255, 0.9)';
  ctx.lineWidth = 1;
  ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
  ctx.strokeRect(x0, y0, x1 - x0, y1 - y0);
}

// Arrows along the selected event's chain. A fan-out to many lanes (an execution's
// instructions) is drawn as one arrow and a bracket over the lanes it reaches.
function drawChain(tl) {
  if (!tl.chain) return;
  const pos = new Map();
  for (const level of tl.chain.levels) {
    for (const e of level.events) {
      const L = tl.layout.lanes.get(e.lane);
      if (!L || e.row >= L.shown) continue;
      const y = tl.screenY(L) + e.row * ROW_H + ROW_H / 2;
      pos.set(e.id, {x0: tl.xOf(e.ts), x1: tl.xOf(e.ts + e.dur), y});
    }
  }
  const bySource = new Map();
  for (const [a, b] of tl.chain.edges) {
    if (!bySource.has(a)) bySource.set(a, []);
    bySource.get(a).push(b);
  }
  const ctx = tl.ctx;
  ctx.strokeStyle = '#e0115f';
  ctx.fillStyle = '#e0115f';
  ctx.lineWidth = 1.5;
  for (const [a, targets] of bySource) {
    const pa = pos.get(a);
    if (!pa) continue;
    const drawn = targets.map((b) => pos.get(b)).filter((p) => p);
    if (drawn.length > 4) {
      fanOut(tl, pa, drawn, targets.length);
      continue;
    }
    for (const pb of drawn) arrow(tl, pa, pb);
  }
}

function arrow(tl, pa, pb) {
  const ctx = tl.ctx;
  const xa = Math.max(LABEL_W, Math.min(tl.width, pa.x0 + Math.min(6, (pa.x1 - pa.x0) / 2)));
  const xb = Math.max(LABEL_W, Math.min(tl.width, pb.x0 + 1));
  const down = pb.y > pa.y;
  const ya = pa.y + (down ? ROW_H / 2 - 2 : -ROW_H / 2 + 2);
  const yb = pb.y + (down ? -ROW_H / 2 + 1 : ROW_H / 2 - 1);
  ctx.beginPath();
  ctx.moveTo(xa, ya);
  const my = (ya + yb) / 2;
  ctx.bezierCurveTo(xa, my, xb, my, xb, yb);
  ctx.stroke();
  const dir = yb > ya ? 1 : -1;
  ctx.beginPath();
  ctx.moveTo(xb, yb);
  ctx.lineTo(xb - 4, yb - 6 * dir);
  ctx.lineTo(xb + 4, yb - 6 * dir);
  ctx.closePath();
  ctx.fill();
}

function fanOut(tl, pa, targets, total) {
  const ctx = tl.ctx;
  const ys = targets.map((p) => p.y);
  const top = Math.min(...ys) - ROW_H / 2;
  const bottom = Math.max(...ys) + ROW_H / 2;
  const x = Math.max(LABEL_W + 4, Math.min(...targets.map((p) => p.x0)) - 6);
  arrow(tl, pa, {x0: x, x1: x, y: top + ROW_H / 2});
  ctx.beginPath();
  ctx.moveTo(x + 5, top);
  ctx.lineTo(x, top);
  ctx.lineTo(x, bottom);
  ctx.lineTo(x + 5, bottom);
  ctx.stroke();
  const label = `${total} lanes`;
  ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
  const w = ctx.measureText(label).width + 6;
  ctx.fillRect(x - w - 2, (top + bottom) / 2 - 8, w, 16);
  ctx.fillStyle = '#e0115f';
  ctx.fillText(label, x - w + 1, (top + bottom) / 2);
}

function drawAxis(tl) {
  const ctx = tl.ctx;
  ctx.fillStyle = '#f7f7f9';
  ctx.fillRect(0, 0, tl.width, AXIS_H);
  ctx.strokeStyle = '#ccc';
  ctx.beginPath();
  ctx.moveTo(0, AXIS_H - 0.5);
  ctx.lineTo(tl.width, AXIS_H - 0.5);
  ctx.stroke();
  const span = tl.t1 - tl.t0;
  const step = tickStep(span, tl.trackWidth());
  const first = Math.ceil((tl.t0 - tl.offset) / step) * step + tl.offset;
  ctx.fillStyle = '#555';
  ctx.strokeStyle = '#bbb';
  ctx.font = FONT;
  tl.ticks = [];  // {t, label}: what the axis shows, for tests
  for (let i = 0, t = first; t < tl.t1; t = first + ++i * step) {
    const x = tl.xOf(t);
    const label = fmtTick(t - tl.offset, step);
    ctx.beginPath();
    ctx.moveTo(x + 0.5, AXIS_H - 6);
    ctx.lineTo(x + 0.5, AXIS_H);
    ctx.stroke();
    ctx.fillText(label, x + 3, AXIS_H / 2);
    tl.ticks.push({t, label});
  }
  ctx.fillStyle = '#f7f7f9';
  ctx.fillRect(0, 0, LABEL_W, AXIS_H - 1);
  ctx.fillStyle = '#1d2a44';
  tl.axisText = `${fmtNs(span)} shown · grid ${fmtNs(step)}`;
  ctx.fillText(tl.axisText, 8, AXIS_H / 2);
  const m = tl.markRange;
  if (m) {
    const x0 = Math.max(LABEL_W, tl.xOf(m.t0));
    const x1 = Math.min(tl.width, tl.xOf(m.t1));
    const label = `marked ${fmtNs(m.t1 - m.t0)}`;
    const w = ctx.measureText(label).width + 10;
    const cx = Math.max(LABEL_W, Math.min(tl.width - w, (x0 + x1) / 2 - w / 2));
    ctx.fillStyle = '#d08a00';
    ctx.fillRect(cx, 2, w, AXIS_H - 4);
    ctx.fillStyle = '#fff';
    ctx.fillText(label, cx + 5, AXIS_H / 2);
  }
}

function drawScrollbar(tl) {
  const view = tl.height - tl.scrollTop();
  const content = tl.layout.contentH;
  tl.scrollbar = null;
  if (content <= view) return;
  const ctx = tl.ctx;
  const x = tl.width - SCROLLBAR_W;
  const top = tl.scrollTop();
  const h = Math.max(24, (view * view) / content);
  const y = top + (tl.scrollY / (content - view)) * (view - h);
  ctx.fillStyle = 'rgba(0, 0, 0, 0.06)';
  ctx.fillRect(x, top, SCROLLBAR_W, view);
  ctx.fillStyle = 'rgba(40, 50, 70, 0.45)';
  ctx.fillRect(x + 1, y, SCROLLBAR_W - 2, h);
  tl.scrollbar = {x, top, view, y, h, content};
}
