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
  const layer = tl.data ? barLayer(tl, y0, y1) : null;
  const over = [];  // what each lane draws over its bars, once the layer is on the canvas
  for (const [id, L, y] of shown) {
    if (L.lane.counter) drawCounter(tl, L, y, tl.data ? tl.data.counters.get(id) || [] : []);
    else if (L.lane.memory) drawMemoryLane(tl, id, L, y, tl.data ? tl.data.memory.get(id) || [] : [], LABEL_W);
    else if (layer) over.push(drawItems(tl, id, L, y, layer));
  }
  if (layer) blitBars(tl, layer);
  for (const o of over) drawOverBars(tl, o);
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

// The bars of a view's lanes are written as pixels into one layer and drawn onto the canvas
// together: a canvas without a GPU (headless browsers, remote desktops, software rendering)
// rasterises each fillRect and parses each fillStyle on its own, and bars were most of a view's
// drawing time. Every bar of a row has the row's height, so the layer holds one line of pixels
// per row on screen, stretched to the row's height when drawn. Bars land on whole device pixels,
// at least one wide.
function barLayer(tl, y0, y1) {
  const dpr = tl.dpr || 1;
  const x0 = Math.round(LABEL_W * dpr);
  const W = Math.max(1, Math.round(tl.width * dpr) - x0);
  let layer = tl.barLayer;
  if (!layer || layer.W !== W) {
    const canvas = document.createElement('canvas');
    layer = tl.barLayer = {canvas, ctx: canvas.getContext('2d'), W, cap: 0};
    growLayer(layer, 256);
  }
  layer.dpr = dpr;
  layer.x0 = x0;
  layer.y0 = y0;
  layer.y1 = y1;
  layer.used = 0;
  layer.lines = [];  // [line, y (CSS px)] of each row with a bar
  return layer;
}

function growLayer(layer, cap) {
  const image = new ImageData(layer.W, cap);
  const px = new Uint32Array(image.data.buffer);
  if (layer.px) px.set(layer.px);
  layer.canvas.width = layer.W;
  layer.canvas.height = cap;
  layer.image = image;
  layer.px = px;
  layer.cap = cap;
}

// `n` lines for a lane's rows on screen; the first one's index.
function reserveLines(layer, n) {
  if (layer.used + n > layer.cap) growLayer(layer, Math.max(layer.cap * 2, layer.used + n));
  const first = layer.used;
  layer.used += n;
  return first;
}

// A colour as a pixel of the layer (RGBA bytes in memory), a single event's opaque, a merged
// block's 0.55 of it over the lane; from the canvas's own parse of the colour (any CSS colour).
const opaquePixel = new Map();  // colour -> pixel
const mergedPixel = new Map();
let probe = null;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
function pixel(color, merged) {
  const cache = merged ? mergedPixel : opaquePixel;
  let v = cache.get(color);
  if (v === undefined) {
    probe ||= document.createElement('canvas').getContext('2d', {willReadFrequently: true});
    probe.clearRect(0, 0, 1, 1);
    probe.fillStyle = '#000';
    probe.fillStyle = color;
    probe.fillRect(0, 0, 1, 1);
    const [r, g, b] = probe.getImageData(0, 0, 1, 1).data;
    const alpha = merged ? 140 : 255;  // merged blocks: 0.55 of the colour over the lane
    v = LITTLE_ENDIAN ? ((alpha << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | alpha) >>> 0;
    if (cache.size > 5000) cache.clear();
    cache.set(color, v);
  }
  return v;
}

// Fills [x, x + w) (CSS px) of a line with a pixel value.
function fillLine(layer, line, x, w, value) {
  const dpr = layer.dpr;
  const W = layer.W;
  let c0 = Math.round(x * dpr) - layer.x0;
  let c1 = Math.round((x + w) * dpr) - layer.x0;
  if (c1 <= c0) c1 = c0 + 1;
  if (c0 < 0) c0 = 0;
  if (c1 > W) c1 = W;
  const px = layer.px;
  const at = line * W;
  if (c1 - c0 > 6) {
    px.fill(value, at + c0, at + c1);
  } else {
    for (let i = at + c0, e = at + c1; i < e; i++) px[i] = value;
  }
}

// The layer's lines onto the canvas, each stretched to its row (over the lanes' backgrounds,
// under their labels), then cleared for the next area.
function blitBars(tl, layer) {
  if (!layer.lines.length) return;
  const W = layer.W;
  layer.ctx.putImageData(layer.image, 0, 0, 0, 0, W, layer.used);
  const ctx = tl.ctx;
  const dpr = layer.dpr;
  ctx.save();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.imageSmoothingEnabled = false;
  for (const [line, y] of layer.lines) {
    const top = Math.round((y + 1) * dpr);
    const h = Math.round((y + ROW_H - 1) * dpr) - top;
    ctx.drawImage(layer.canvas, 0, line, W, 1, layer.x0, top, W, h);
  }
  ctx.restore();
  layer.px.fill(0, 0, layer.used * W);
  layer.ctx.clearRect(0, 0, W, layer.used);
}

// A lane's items as the viewport sends them with flat=1: one array, `stride` numbers an item
// ([ts, dur, row, name, id, count, ext, busy, kind], the last three absent from compact ones).
export function withStride(items, stride) {
  items.stride = stride;
  return items;
}

// A bar as drawn (tl.rects: hit tests, tooltips, tests): where, and its item, made as an array
// when first read.
class Bar {
  constructor(x, y, w, name, lane, items, at) {
    this.x = x;
    this.y = y;
    this.w = w;
    this.h = ROW_H;
    this.name = name;
    this.lane = lane;
    this.items = items;
    this.at = at;
    this.cached = null;
  }

  get item() {
    return (this.cached ||= this.items.slice(this.at, this.at + this.items.stride));
  }
}

// A lane's bars into the layer; returns what is drawn over them (names, the selection, matches).
function drawItems(tl, id, L, y0, layer) {
  const items = tl.data.lanes.get(id);
  const width = tl.trackWidth();
  const scale = width / (tl.t1 - tl.t0);
  const over = {id, L, y0, scale, labels: [], boxed: null};
  if (!items) return over;
  const right = LABEL_W + width;
  const t0 = tl.t0;
  const strings = tl.data.strings;
  // Colour by name: one look-up per name and view, not per event (a view draws tens of thousands).
  const byName = tl.colorBy === 'name' ? (tl.data.colors ||= new Map()) : null;
  const shown = L.shown;
  const legend = tl.legend;
  const selected = tl.selected;
  const rects = tl.rects;
  const labels = over.labels;
  // The rows on screen (in the area), a line of the layer each.
  const rowFirst = Math.max(0, Math.floor((layer.y0 - y0) / ROW_H));
  const rowEnd = Math.min(shown, Math.ceil((layer.y1 - y0) / ROW_H));
  if (rowEnd <= rowFirst) return over;
  const base = reserveLines(layer, rowEnd - rowFirst) - rowFirst;
  const used = new Uint8Array(rowEnd - rowFirst);
  // Indexed loops and element reads, not for-of and destructuring: the first views run this
  // before the JIT has optimised it, where the iterator protocol costs more than the drawing.
  const stride = items.stride;
  const full = stride > 8;  // compact items have no ext, busy and kind
  for (let i = 0, n = items.length; i < n; i += stride) {
    const row = items[i + 2];
    if (row >= rowEnd || row < rowFirst) continue;
    let x = LABEL_W + (items[i] - t0) * scale;
    let w = items[i + 1] * scale;
    if (w < 1) w = 1;
    if (x + w < LABEL_W || x > right) continue;
    if (x < LABEL_W) {
      w -= LABEL_W - x;
      x = LABEL_W;
    }
    const nameIdx = items[i + 3];
    const count = items[i + 5];
    const y = y0 + row * ROW_H;
    const name = strings[nameIdx];
    let color = byName ? byName.get(nameIdx) : undefined;
    if (color === undefined) {
      color = tl.itemColor(name, full ? items[i + 6] : undefined, full ? items[i + 8] : undefined);
      if (byName) byName.set(nameIdx, color);
    }
    fillLine(layer, base + row, x, w, pixel(color, count > 1));
    used[row - rowFirst] = 1;
    if (legend) {
      tl.drawnNames.set(name, (tl.drawnNames.get(name) || 0) + w);
      const kind = full ? tl.kinds[items[i + 8]] : undefined;
      if (kind) tl.drawnKinds.add(kind);
    }
    if (w > 36) labels.push([x, y, w, name, count]);
    if (items[i + 4] === selected && count === 1) over.boxed = [x, y, w];
    rects.push(new Bar(x, y, w, name, id, items, i));
  }
  for (let r = rowFirst; r < rowEnd; r++) if (used[r - rowFirst]) layer.lines.push([base + r, y0 + r * ROW_H]);
  return over;
}

// Over a lane's bars: the names of bars wide enough for them, the selected event's outline, the
// search matches.
function drawOverBars(tl, {id, L, y0, scale, labels, boxed}) {
  const ctx = tl.ctx;
  ctx.fillStyle = '#111';
  for (const [x, y, w, name, count] of labels) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, w - 2, ROW_H);
    ctx.clip();
    ctx.fillText(count > 1 ? `${count} × ${name}…` : name, x + 3, y + ROW_H / 2);
    ctx.restore();
  }
  if (boxed) {
    ctx.strokeStyle = '#e0115f';
    ctx.lineWidth = 3;
    ctx.strokeRect(boxed[0], boxed[1] + 0.5, Math.max(boxed[2], 2), ROW_H - 1);
  }
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
