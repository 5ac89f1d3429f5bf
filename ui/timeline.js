// A canvas timeline over one trace: lane groups stacked top to bottom, time left to right.
// It asks the server for one viewport at a time (about one item per pixel and row) and never
// holds the whole trace. Interaction: wheel zooms at the cursor (shift+wheel scrolls lanes),
// drag pans, shift+drag selects a box, click selects, W/S zoom, A/D pan.
import {fmtNs, fmtTick, colorFor} from './format.js';

const LABEL_W = 230;
const AXIS_H = 22;
const GROUP_H = 20;
const ROW_H = 16;
const COUNTER_H = 34;
const LANE_GAP = 3;

export class Timeline {
  constructor(canvas, opts) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.api = opts.api;
    this.trace = opts.trace;
    this.colorBy = opts.colorBy || 'name';
    this.showGroups = opts.showGroups !== false;
    this.onSelect = opts.onSelect || (() => {});
    this.onBox = opts.onBox || (() => {});
    this.onView = opts.onView || (() => {});
    this.onHover = opts.onHover || (() => {});
    this.tooltip = opts.tooltip || null;
    this.groups = [];
    this.laneY = new Map();
    this.groupY = [];
    this.contentH = 0;
    this.collapsed = new Set(opts.collapsed || []);
    this.laneFilter = null;
    this.t0 = 0;
    this.t1 = 1;
    this.offset = 0;  // the axis shows time relative to this
    this.data = null;
    this.selected = null;
    this.highlightName = null;
    this.highlightRe = null;
    this.chain = null;
    this.box = null;
    this.scrollY = 0;
    this.rects = [];
    this.headerRects = [];
    this.seq = 0;
    this.accepted = 0;
    this.fetchTimer = null;
    this.lastFetchMs = 0;
    this.firstPaint = new Promise((resolve) => (this.resolveFirstPaint = resolve));
    this.installEvents();
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(canvas.parentElement);
    this.resize();
  }

  // lanesResponse: /api/trace/N/lanes.
  setLanes(lanesResponse, laneFilter = null) {
    this.groups = lanesResponse.groups;
    this.laneFilter = laneFilter ? new Set(laneFilter) : null;
    this.laneInfo = new Map();
    for (const g of this.groups) for (const l of g.lanes) this.laneInfo.set(l.id, l);
    this.layout();
    if (this.laneY.size === 0) this.resolveFirstPaint();
  }

  layout() {
    this.laneY = new Map();
    this.groupY = [];
    let y = AXIS_H;
    for (const g of this.groups) {
      const lanes = g.lanes.filter((l) => !this.laneFilter || this.laneFilter.has(l.id));
      if (lanes.length === 0) continue;
      const collapsed = this.collapsed.has(g.key);
      if (this.showGroups) {
        this.groupY.push({group: g, y, collapsed, count: lanes.length});
        y += GROUP_H;
      }
      if (collapsed) continue;
      for (const l of lanes) {
        const h = l.counter ? COUNTER_H : Math.max(1, l.rows) * ROW_H;
        this.laneY.set(l.id, {y, h, lane: l});
        y += h + LANE_GAP;
      }
    }
    this.contentH = y + 10;
    this.clampScroll();
  }

  visibleLanes() {
    return [...this.laneY.keys()];
  }

  toggleGroup(key) {
    if (this.collapsed.has(key)) this.collapsed.delete(key);
    else this.collapsed.add(key);
    this.layout();
    this.draw();
    this.fetchSoon();
  }

  trackWidth() {
    return Math.max(50, this.width - LABEL_W);
  }

  setView(t0, t1, {silent = false} = {}) {
    if (!(t1 > t0)) return;
    if (t1 - t0 < 20) {
      const mid = (t0 + t1) / 2;
      t0 = mid - 10;
      t1 = mid + 10;
    }
    this.t0 = t0;
    this.t1 = t1;
    this.draw();
    this.fetchSoon();
    if (!silent) this.onView(t0, t1);
  }

  fetchSoon() {
    if (this.fetchTimer) return;
    this.fetchTimer = setTimeout(() => {
      this.fetchTimer = null;
      this.fetch();
    }, 15);
  }

  async fetch() {
    if (this.laneY.size === 0) return;  // nothing to show yet (or a trace without events)
    const seq = ++this.seq;
    const lanes = this.visibleLanes();
    const all = !this.laneFilter && this.collapsed.size === 0;
    const started = performance.now();
    try {
      const d = await this.api.viewport(this.trace, {
        t0: Math.floor(this.t0), t1: Math.ceil(this.t1), width: Math.round(this.trackWidth()),
        lanes: all ? undefined : lanes.join(','),
      });
      if (seq < this.accepted) return;
      this.accepted = seq;
      this.lastFetchMs = performance.now() - started;
      const data = {lanes: new Map(), counters: new Map(), strings: d.strings};
      for (const l of d.lanes) data.lanes.set(l.lane, l.items);
      for (const c of d.counters) data.counters.set(c.lane, c.points);
      this.data = data;
      this.draw();
      this.resolveFirstPaint();
    } catch (e) {
      console.error(e);
    }
  }

  resize() {
    const parent = this.canvas.parentElement;
    const dpr = window.devicePixelRatio || 1;
    this.width = parent.clientWidth;
    this.height = parent.clientHeight;
    this.canvas.width = Math.max(1, Math.round(this.width * dpr));
    this.canvas.height = Math.max(1, Math.round(this.height * dpr));
    this.canvas.style.width = this.width + 'px';
    this.canvas.style.height = this.height + 'px';
    this.dpr = dpr;
    this.clampScroll();
    this.draw();
    this.fetchSoon();
  }

  clampScroll() {
    const max = Math.max(0, (this.contentH || 0) - (this.height || 0));
    this.scrollY = Math.min(Math.max(0, this.scrollY), max);
  }

  xOf(t) {
    return LABEL_W + ((t - this.t0) / (this.t1 - this.t0)) * this.trackWidth();
  }

  tOf(x) {
    return this.t0 + ((x - LABEL_W) / this.trackWidth()) * (this.t1 - this.t0);
  }

  itemColor(name, ext) {
    return this.colorBy === 'ext' ? colorFor('ext:' + ext) : colorFor(name);
  }

  isHighlighted(name) {
    if (this.highlightName !== null && name === this.highlightName) return true;
    return this.highlightRe !== null && this.highlightRe.test(name);
  }

  draw() {
    const ctx = this.ctx;
    if (!this.width) return;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, this.width, this.height);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    this.rects = [];
    this.headerRects = [];
    const W = this.width;
    const scale = this.trackWidth() / (this.t1 - this.t0);

    ctx.save();
    ctx.beginPath();
    ctx.rect(0, AXIS_H, W, this.height - AXIS_H);
    ctx.clip();
    ctx.translate(0, -this.scrollY);
    // Group headers and lane labels.
    for (const g of this.groupY) {
      ctx.fillStyle = '#e4e9f2';
      ctx.fillRect(0, g.y, W, GROUP_H);
      ctx.fillStyle = '#1d2a44';
      ctx.font = 'bold 12px system-ui, sans-serif';
      ctx.fillText(`${g.collapsed ? '▸' : '▾'} ${g.group.title} (${g.count})`, 6, g.y + GROUP_H / 2);
      ctx.font = '11px system-ui, sans-serif';
      this.headerRects.push({x: 0, y: g.y - this.scrollY, w: W, h: GROUP_H, key: g.group.key});
    }
    let alt = false;
    for (const [id, L] of this.laneY) {
      if (L.y + L.h < this.scrollY || L.y > this.scrollY + this.height) continue;
      alt = !alt;
      ctx.fillStyle = alt ? '#fafbfd' : '#f3f5f9';
      ctx.fillRect(0, L.y, W, L.h);
      ctx.fillStyle = '#333';
      ctx.save();
      ctx.beginPath();
      ctx.rect(0, L.y, LABEL_W - 6, L.h);
      ctx.clip();
      ctx.fillText(L.lane.title, 8, L.y + Math.min(L.h, ROW_H) / 2);
      ctx.restore();
    }
    // Items, clipped to the track area.
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, 0, W - LABEL_W, this.contentH + this.height);
    ctx.clip();
    const data = this.data;
    if (data) {
      for (const [id, L] of this.laneY) {
        if (L.y + L.h < this.scrollY || L.y > this.scrollY + this.height) continue;
        if (L.lane.counter) {
          this.drawCounter(L, data.counters.get(id) || []);
          continue;
        }
        const items = data.lanes.get(id);
        if (!items) continue;
        for (const it of items) {
          const [ts, dur, row, nameIdx, sid, count, ext] = it;
          let x = this.xOf(ts);
          let w = Math.max(dur * scale, 1);
          if (x + w < LABEL_W || x > W) continue;
          if (x < LABEL_W) {
            w -= LABEL_W - x;
            x = LABEL_W;
          }
          const y = L.y + row * ROW_H;
          const name = data.strings[nameIdx];
          ctx.globalAlpha = count > 1 ? 0.6 : 1;
          ctx.fillStyle = this.itemColor(name, ext);
          ctx.fillRect(x, y + 1, w, ROW_H - 2);
          ctx.globalAlpha = 1;
          if (w > 36) {
            ctx.fillStyle = '#111';
            ctx.save();
            ctx.beginPath();
            ctx.rect(x, y, w - 2, ROW_H);
            ctx.clip();
            ctx.fillText(count > 1 ? `${count} × ${name}…` : name, x + 3, y + ROW_H / 2);
            ctx.restore();
          }
          if (this.isHighlighted(name)) {
            ctx.fillStyle = '#111';
            if (w >= 6) {
              ctx.strokeStyle = '#111';
              ctx.lineWidth = 2;
              ctx.strokeRect(x + 1, y + 1.5, w - 2, ROW_H - 3);
            } else {
              ctx.fillRect(x, y + 1, Math.max(w, 1), 3);  // a tick on top of narrow items
            }
          }
          if (sid === this.selected && count === 1) {
            ctx.strokeStyle = '#e0115f';
            ctx.lineWidth = 3;
            ctx.strokeRect(x, y + 0.5, Math.max(w, 2), ROW_H - 1);
          }
          this.rects.push({x, y: y - this.scrollY, w, h: ROW_H, item: it, name, lane: id});
        }
      }
    }
    ctx.restore();
    this.drawChain();
    if (this.box) {
      const x0 = this.xOf(this.box.t0);
      const x1 = this.xOf(this.box.t1);
      ctx.fillStyle = 'rgba(40, 110, 255, 0.15)';
      ctx.strokeStyle = 'rgba(40, 110, 255, 0.9)';
      ctx.lineWidth = 1;
      ctx.fillRect(x0, this.box.y0, x1 - x0, this.box.y1 - this.box.y0);
      ctx.strokeRect(x0, this.box.y0, x1 - x0, this.box.y1 - this.box.y0);
    }
    ctx.restore();
    this.drawAxis();
  }

  drawCounter(L, points) {
    const ctx = this.ctx;
    const lo = L.lane.min ?? 0;
    const hi = L.lane.max ?? 1;
    const span = hi - lo || 1;
    const yOf = (v) => L.y + L.h - 2 - ((v - lo) / span) * (L.h - 4);
    ctx.fillStyle = 'rgba(60, 140, 90, 0.35)';
    ctx.strokeStyle = 'rgb(40, 120, 70)';
    ctx.beginPath();
    let started = false;
    for (let i = 0; i < points.length; i++) {
      const [ts, , max] = points[i];
      const x = Math.max(LABEL_W, this.xOf(ts));
      const next = i + 1 < points.length ? Math.min(this.width, this.xOf(points[i + 1][0])) : this.width;
      if (!started) {
        ctx.moveTo(x, L.y + L.h);
        started = true;
      }
      ctx.lineTo(x, yOf(max));
      ctx.lineTo(next, yOf(max));
    }
    if (started) {
      ctx.lineTo(this.width, L.y + L.h);
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    }
    ctx.fillStyle = '#333';
    ctx.fillText(`${hi.toPrecision(4)}`, LABEL_W + 4, L.y + 7);
  }

  // Arrows along the selected event's dependency chain.
  drawChain() {
    if (!this.chain) return;
    const ctx = this.ctx;
    const pos = new Map();
    for (const level of this.chain.levels) {
      for (const e of level.events) {
        const L = this.laneY.get(e.lane);
        if (!L) continue;
        pos.set(e.id, {x0: this.xOf(e.ts), x1: this.xOf(e.ts + e.dur), y: L.y + e.row * ROW_H + ROW_H / 2});
      }
    }
    ctx.strokeStyle = '#e0115f';
    ctx.fillStyle = '#e0115f';
    ctx.lineWidth = 1.5;
    for (const [a, b] of this.chain.edges) {
      const pa = pos.get(a);
      const pb = pos.get(b);
      if (!pa || !pb) continue;
      const xa = Math.max(LABEL_W, Math.min(this.width, pa.x0 + Math.min(6, (pa.x1 - pa.x0) / 2)));
      const xb = Math.max(LABEL_W, Math.min(this.width, pb.x0 + 1));
      const ya = pa.y + (pb.y > pa.y ? ROW_H / 2 - 2 : -ROW_H / 2 + 2);
      const yb = pb.y + (pb.y > pa.y ? -ROW_H / 2 + 1 : ROW_H / 2 - 1);
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
  }

  drawAxis() {
    const ctx = this.ctx;
    ctx.fillStyle = '#f7f7f9';
    ctx.fillRect(0, 0, this.width, AXIS_H);
    ctx.strokeStyle = '#ccc';
    ctx.beginPath();
    ctx.moveTo(0, AXIS_H - 0.5);
    ctx.lineTo(this.width, AXIS_H - 0.5);
    ctx.stroke();
    const span = this.t1 - this.t0;
    const target = span / Math.max(1, this.trackWidth() / 110);
    const pow = Math.pow(10, Math.floor(Math.log10(target)));
    const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= target) || pow * 10;
    const first = Math.ceil((this.t0 - this.offset) / step) * step + this.offset;
    ctx.fillStyle = '#555';
    ctx.strokeStyle = '#ddd';
    for (let t = first; t < this.t1; t += step) {
      const x = this.xOf(t);
      ctx.beginPath();
      ctx.moveTo(x + 0.5, AXIS_H - 6);
      ctx.lineTo(x + 0.5, AXIS_H);
      ctx.stroke();
      ctx.fillText(fmtTick(t - this.offset, step), x + 3, AXIS_H / 2);
    }
    ctx.fillStyle = '#1d2a44';
    ctx.fillText(`${fmtNs(span)} shown`, 8, AXIS_H / 2);
  }

  hit(x, y) {
    for (let i = this.rects.length - 1; i >= 0; i--) {
      const r = this.rects[i];
      if (x >= r.x - 1 && x <= r.x + r.w + 1 && y >= r.y && y < r.y + r.h) return r;
    }
    return null;
  }

  laneTitle(id) {
    const L = this.laneY.get(id);
    return L ? L.lane.title : '';
  }

  // Client coordinates of the first drawn single event with this name (for tests and tours).
  locate(name) {
    const box = this.canvas.getBoundingClientRect();
    for (const r of this.rects) {
      if (r.name === name && r.item[5] === 1 && r.y >= AXIS_H && r.y + r.h <= this.height) {
        return {x: box.left + r.x + Math.min(r.w / 2, 20), y: box.top + r.y + r.h / 2, id: r.item[4]};
      }
    }
    return null;
  }

  // Zooms to an event (a slice ref from the API) and scrolls its lane into view.
  reveal(ref) {
    const dur = Math.max(ref.dur, 1000);
    this.setView(ref.ts - dur * 1.5, ref.ts + dur * 2.5);
    const L = this.laneY.get(ref.lane);
    if (L && (L.y - AXIS_H < this.scrollY || L.y + L.h > this.scrollY + this.height)) {
      this.scrollY = L.y - AXIS_H - 40;
      this.clampScroll();
      this.draw();
    }
  }

  installEvents() {
    const c = this.canvas;
    let down = null;
    const local = (e) => {
      const b = c.getBoundingClientRect();
      return {x: e.clientX - b.left, y: e.clientY - b.top};
    };
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      const p = local(e);
      if (e.shiftKey) {
        this.scrollY += e.deltaY || e.deltaX;
        this.clampScroll();
        this.draw();
        return;
      }
      if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        const dt = (e.deltaX / this.trackWidth()) * (this.t1 - this.t0);
        this.setView(this.t0 + dt, this.t1 + dt);
        return;
      }
      const at = p.x > LABEL_W ? this.tOf(p.x) : (this.t0 + this.t1) / 2;
      this.zoom(Math.exp(e.deltaY * 0.002), at);
    }, {passive: false});
    c.addEventListener('mousedown', (e) => {
      const p = local(e);
      down = {x: p.x, y: p.y, t0: this.t0, t1: this.t1, box: e.shiftKey, moved: false};
    });
    window.addEventListener('mousemove', (e) => {
      const p = local(e);
      if (!down) {
        if (e.target === c) this.hover(p, e);  // never from a hidden or other canvas
        return;
      }
      if (Math.abs(p.x - down.x) + Math.abs(p.y - down.y) > 3) down.moved = true;
      if (!down.moved) return;
      if (down.box) {
        const ta = this.tOf(Math.max(LABEL_W, Math.min(down.x, p.x)));
        const tb = this.tOf(Math.max(LABEL_W, Math.max(down.x, p.x)));
        this.box = {t0: ta, t1: tb, y0: Math.min(down.y, p.y) + this.scrollY,
                    y1: Math.max(down.y, p.y) + this.scrollY};
        this.draw();
      } else {
        const dt = ((p.x - down.x) / this.trackWidth()) * (down.t1 - down.t0);
        this.setView(down.t0 - dt, down.t1 - dt);
      }
    });
    window.addEventListener('mouseup', (e) => {
      if (!down) return;
      const d = down;
      down = null;
      const p = local(e);
      if (d.moved && d.box && this.box) {
        const lanes = [];
        for (const [id, L] of this.laneY) {
          if (L.y + L.h >= this.box.y0 && L.y <= this.box.y1) lanes.push(id);
        }
        this.onBox({t0: Math.floor(this.box.t0), t1: Math.ceil(this.box.t1), lanes});
        return;
      }
      if (d.moved) return;
      const header = this.headerRects.find((r) => p.y >= r.y && p.y < r.y + r.h && p.y >= AXIS_H);
      if (header) {
        this.toggleGroup(header.key);
        return;
      }
      const r = this.hit(p.x, p.y);
      if (r && r.item[5] > 1) {
        // A merged block: zoom into it.
        this.setView(r.item[0] - r.item[1] * 0.1, r.item[0] + r.item[1] * 1.1);
        return;
      }
      this.box = null;
      this.onSelect(r ? r.item[4] : null, r);
    });
    c.addEventListener('mouseleave', () => {
      if (this.tooltip) this.tooltip.style.display = 'none';
    });
  }

  zoom(factor, at) {
    const t0 = at - (at - this.t0) * factor;
    const t1 = at + (this.t1 - at) * factor;
    this.setView(t0, t1);
  }

  // Keyboard: W/S zoom, A/D pan (called by the app for the focused timeline).
  key(k) {
    const span = this.t1 - this.t0;
    const mid = (this.t0 + this.t1) / 2;
    if (k === 'w') this.zoom(0.8, mid);
    else if (k === 's') this.zoom(1.25, mid);
    else if (k === 'a') this.setView(this.t0 - span * 0.2, this.t1 - span * 0.2);
    else if (k === 'd') this.setView(this.t0 + span * 0.2, this.t1 + span * 0.2);
    else return false;
    return true;
  }

  hover(p, e) {
    if (!this.tooltip) return;
    const r = p.x > LABEL_W ? this.hit(p.x, p.y) : null;
    if (!r) {
      this.tooltip.style.display = 'none';
      return;
    }
    const [ts, dur, , , , count, , busy] = r.item;
    const lines = count > 1
      ? [`${count} events from ${r.name}`, `span ${fmtNs(dur)}, busy ${fmtNs(busy)}`, 'click to zoom in']
      : [r.name, `duration ${fmtNs(dur)}`, `start ${fmtNs(ts - this.offset)}`];
    lines.push(this.laneTitle(r.lane));
    this.tooltip.textContent = '';
    for (const l of lines) {
      const div = document.createElement('div');
      div.textContent = l;
      this.tooltip.append(div);
    }
    this.tooltip.style.display = 'block';
    this.tooltip.style.left = Math.min(e.clientX + 12, window.innerWidth - 320) + 'px';
    this.tooltip.style.top = e.clientY + 14 + 'px';
  }
}
