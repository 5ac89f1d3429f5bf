// Memory lanes: one per device of a profile_memory trace ("Memory: HIP:0"), from the server's
// memory timeline (the one `opscope report --memory` prints). Allocated bytes are a filled step
// area, reserved bytes a line; the vertical scale is the lane's whole-trace maximum, so the
// peak stands at the same height at every zoom. Viewport points are per-pixel buckets
// [ts, allocated_min, allocated_max, allocated_last, reserved_max, reserved_last]; the drawn
// step is each bucket's maximum, so the peak drawn is the report's peak exactly.
import {fmtNs} from './format.js';

export const MEMORY_H = 32;

// Bytes as torch.profiler's tables and `opscope report --memory` print them (1024-based).
export function fmtBytes(bytes) {
  const mag = Math.abs(bytes);
  if (mag >= 1024 ** 3) return (bytes / 1024 ** 3).toFixed(2) + ' Gb';
  if (mag >= 1024 ** 2) return (bytes / 1024 ** 2).toFixed(2) + ' Mb';
  if (mag >= 1024) return (bytes / 1024).toFixed(2) + ' Kb';
  return `${bytes} b`;
}

// The peak's label, as drawn beside its marker.
export function peakLabel(mem) {
  return `peak ${fmtBytes(mem.peak_allocated)}`;
}

// The lane's full height: the whole trace's highest value, with room above it for the marker.
function scaleOf(mem) {
  return Math.max(1, mem.peak_allocated, mem.peak_reserved) * 1.15;
}

// Draws one memory lane at y0 and records its peak marker as a control (click: 'memory-peak').
export function drawMemoryLane(tl, id, L, y0, points, labelLeft) {
  const ctx = tl.ctx;
  const mem = L.lane.memory;
  const top = y0 + 3;
  const h = L.h - 5;
  const yOf = (v) => top + h - (Math.max(0, v) / scaleOf(mem)) * h;
  const right = tl.width;
  const xs = points.map((p) => Math.max(labelLeft, tl.xOf(p[0])));
  // Allocated: a step area over each bucket's maximum.
  ctx.fillStyle = 'rgba(70, 110, 200, 0.35)';
  ctx.strokeStyle = 'rgb(50, 90, 180)';
  ctx.lineWidth = 1;
  if (points.length) {
    ctx.beginPath();
    ctx.moveTo(xs[0], top + h);
    for (let i = 0; i < points.length; i++) {
      const next = i + 1 < points.length ? xs[i + 1] : right;
      ctx.lineTo(xs[i], yOf(points[i][2]));
      ctx.lineTo(Math.max(next, xs[i] + 1), yOf(points[i][2]));
    }
    ctx.lineTo(right, top + h);
    ctx.closePath();
    ctx.fill();
    ctx.stroke();
  }
  // Reserved: a line, where the trace reports it.
  ctx.strokeStyle = 'rgb(200, 110, 40)';
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  let open = false;
  for (let i = 0; i < points.length; i++) {
    if (points[i][4] < 0) {
      open = false;
      continue;
    }
    const next = i + 1 < points.length ? xs[i + 1] : right;
    const y = yOf(points[i][4]);
    if (open) ctx.lineTo(xs[i], y);
    else ctx.moveTo(xs[i], y);
    ctx.lineTo(next, y);
    open = true;
  }
  ctx.stroke();
  drawPeak(tl, id, L, mem, yOf, labelLeft);
}

// The peak: a marker at (peak time, peak bytes) and its label; a control for clicks and hover.
function drawPeak(tl, id, L, mem, yOf, labelLeft) {
  const ctx = tl.ctx;
  const x = tl.xOf(mem.peak_ts_ns);
  if (x < labelLeft - 4 || x > tl.width + 4) return;
  const y = yOf(mem.peak_allocated);
  ctx.fillStyle = '#c2185b';
  ctx.beginPath();
  ctx.moveTo(x, y + 1);
  ctx.lineTo(x - 5, y - 6);
  ctx.lineTo(x + 5, y - 6);
  ctx.closePath();
  ctx.fill();
  const label = peakLabel(mem);
  ctx.font = 'bold 11px system-ui, sans-serif';
  const w = ctx.measureText(label).width;
  const lx = x + 8 + w > tl.width - 10 ? x - 8 - w : x + 8;
  ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
  ctx.fillRect(lx - 2, y - 3, w + 4, 13);
  ctx.fillStyle = '#8a1040';
  ctx.fillText(label, lx, y + 3);
  ctx.font = '11px system-ui, sans-serif';
  const box = {x: Math.min(x - 6, lx - 2), y: y - 8, w: Math.abs(lx - x) + w + 10, h: 20};
  tl.memoryPeaks.push({lane: id, label, x, y, bytes: mem.peak_allocated, ts: mem.peak_ts_ns});
  tl.controls.push({...box, action: 'memory-peak', lane: id,
                    title: `${mem.device} ${label} at ${fmtNs(mem.peak_ts_ns - tl.offset)}: click to zoom there and list the ops holding it`});
}

// Tooltip lines for time t in a memory lane: the bucket in force at t (allocated and reserved).
export function memoryHoverLines(tl, L, t, points) {
  const mem = L.lane.memory;
  let k = -1;
  for (let lo = 0, hi = points.length - 1; lo <= hi;) {
    const mid = (lo + hi) >> 1;
    if (points[mid][0] <= t) {
      k = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  const lines = [L.lane.title, `time ${fmtNs(t - tl.offset)}`];
  if (k < 0) return [...lines, 'no allocation yet'];
  const [, lo, hi, last, resMax, resLast] = points[k];
  lines.push(lo === hi ? `allocated ${fmtBytes(last)} (${last.toLocaleString()} bytes)`
                       : `allocated ${fmtBytes(lo)} – ${fmtBytes(hi)} in this pixel, then ${fmtBytes(last)}`);
  if (resMax >= 0) {
    lines.push(resMax === resLast ? `reserved ${fmtBytes(resLast)} (${resLast.toLocaleString()} bytes)`
                                  : `reserved up to ${fmtBytes(resMax)}, then ${fmtBytes(resLast)}`);
  }
  lines.push(`${peakLabel(mem)} at ${fmtNs(mem.peak_ts_ns - tl.offset)}`);
  return lines;
}

// The Details panel after a click on a peak: the device's figures and the ops holding the most
// at the peak, as `opscope report --memory` lists them. onOp(name) marks an op's events.
export function renderMemoryPeak(box, lane, ctx, onOp) {
  const m = lane.memory;
  box.textContent = '';
  box.dataset.memoryLane = lane.id;
  const h = document.createElement('h3');
  h.textContent = `${lane.title}: ${peakLabel(m)} at ${fmtNs(m.peak_ts_ns - ctx.offset)}`;
  const facts = document.createElement('p');
  facts.className = 'muted';
  facts.textContent = `${m.peak_allocated.toLocaleString()} bytes allocated at the peak` +
      (m.peak_reserved >= 0 ? `; reserved at most ${fmtBytes(m.peak_reserved)}` : '') +
      `; ${m.allocations.toLocaleString()} allocations, ${m.frees.toLocaleString()} frees in the trace`;
  const title = document.createElement('h4');
  title.textContent = `Ops holding the most at ${m.device}'s peak (${fmtBytes(m.peak_allocated)} allocated)`;
  const table = document.createElement('table');
  table.className = 'grid memory-holders';
  const head = table.createTHead().insertRow();
  for (const [text, num] of [['Op', false], ['Bytes', true], ['Allocs', true]]) {
    const th = document.createElement('th');
    th.textContent = text;
    if (num) th.className = 'num';
    head.append(th);
  }
  const body = table.createTBody();
  for (const holder of m.holders_at_peak) {
    const row = body.insertRow();
    const name = row.insertCell();
    if (holder.op === '(no op)') {
      name.textContent = holder.op;
    } else {
      const b = document.createElement('button');
      b.className = 'event-link';
      b.title = `mark every ${holder.op}`;
      b.textContent = holder.op;
      b.addEventListener('click', () => onOp(holder.op));
      name.append(b);
    }
    for (const v of [fmtBytes(holder.bytes), holder.allocations.toLocaleString()]) {
      const c = row.insertCell();
      c.className = 'num';
      c.textContent = v;
    }
    row.cells[1].title = `${holder.bytes.toLocaleString()} bytes`;
  }
  const note = document.createElement('p');
  note.className = 'muted';
  note.textContent = 'Allocations made during the trace and not freed at the peak, by the innermost op enclosing each; ' +
      'memory allocated before the trace began is not among them.';
  box.append(h, facts, title, m.holders_at_peak.length ? table : '', note);
}
