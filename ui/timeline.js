// A canvas timeline over one trace: lane groups stacked top to bottom, time left to right.
// It asks the server for one viewport at a time (about one item per pixel and row) and never
// holds the whole trace. Interaction: wheel zooms at the cursor (shift+wheel, or the wheel over
// the labels, scrolls lanes), drag pans, shift+drag selects a box, click selects; keys are in
// key(). Zooming out stops at the trace's extent.
import {fmtNs, colorFor, kindColor} from './format.js';
import {AXIS_H, ROW_H, LaneLayout} from './lanes.js';
import {drawTimeline, withStride, LABEL_W, SCROLLBAR_W, ANNOTATION_H} from './timeline_draw.js';
import {memoryHoverLines} from './memory_lane.js';

export {LABEL_W};

export class Timeline {
  constructor(canvas, opts) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.api = opts.api;
    this.trace = opts.trace;
    this.colorBy = opts.colorBy || 'name';
    this.kinds = [];
    this.layout = new LaneLayout({showGroups: opts.showGroups !== false, groupOrder: opts.groupOrder || null});
    for (const k of opts.collapsed || []) this.layout.collapsed.add(k);
    this.onSelect = opts.onSelect || (() => {});
    this.onBox = opts.onBox || (() => {});
    this.onView = opts.onView || (() => {});
    this.onLayout = opts.onLayout || (() => {});
    this.onDraw = opts.onDraw || (() => {});
    this.onMemoryPeak = opts.onMemoryPeak || (() => {});
    this.memoryPeaks = [];
    this.tooltip = opts.tooltip || null;
    this.t0 = 0;
    this.t1 = 1;
    this.offset = 0;       // the axis shows time relative to this
    this.extent = null;    // {t0, t1}: zooming and panning stay around it
    this.data = null;
    this.marks = null;     // lane id -> [[ts, dur, row, count]] matching the highlight
    this.highlight = null; // {q, exact} or {criticalPath: {step, instance}}: events to mark
    this.selected = null;
    this.chain = null;
    this.box = null;
    this.markRange = null;
    this.annotations = [];
    this.labelSuffix = null;
    this.legend = opts.legend !== false;    // track the names and kinds drawn (legend.js)
    this.overlay = opts.overlay || null;    // (tl) => draws over the lanes, clipped to them
    this.describe = opts.describe || null;  // (hit rect) => tooltip lines, or null for the default
    this.scrollY = 0;
    this.rects = [];
    this.controls = [];
    this.hoverLane = null;
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

  // lanesResponse: /api/trace/N/lanes; laneFilter: lane ids to show (null = all).
  setLanes(lanesResponse, laneFilter = null) {
    this.kinds = lanesResponse.trace.kinds || [];
    this.layout.filter = laneFilter ? new Set(laneFilter) : null;
    this.layout.setGroups(lanesResponse.groups);
    this.relayout();
    if (this.layout.lanes.size === 0) this.resolveFirstPaint();
  }

  relayout({fetch = true} = {}) {
    this.layout.layout();
    this.clampScroll();
    this.draw();
    if (fetch) this.fetchSoon();
  }

  get collapsed() {
    return this.layout.collapsed;
  }

  toggleGroup(path) {
    this.layout.toggleGroup(path);
    this.relayout();
    this.onLayout();
  }

  togglePin(id) {
    this.layout.togglePin(id);
    this.relayout({fetch: false});
    this.onLayout();
  }

  toggleRows(id) {
    this.layout.toggleRows(id);
    this.relayout({fetch: false});
    this.onLayout();
  }

  trackWidth() {
    return Math.max(50, this.width - LABEL_W - SCROLLBAR_W);
  }

  // Where the lanes begin: under the axis and, when there are annotations, the strip that holds
  // their labels (so a label never covers a lane's events).
  lanesTop() {
    return AXIS_H + (this.annotations && this.annotations.length ? ANNOTATION_H : 0);
  }

  scrollTop() {
    return this.lanesTop() + this.layout.pinnedH;
  }

  screenY(L) {
    return L.pinned ? this.lanesTop() + L.y : this.scrollTop() + L.y - this.scrollY;
  }

  // Keeps [t0, t1] within the extent: no wider than it (plus 10%), no further out than a margin.
  bound(t0, t1) {
    if (!this.extent) return [t0, t1];
    const ext = this.extent.t1 - this.extent.t0;
    const maxSpan = ext * 1.1;
    let span = t1 - t0;
    if (span > maxSpan) {
      const mid = Math.min(Math.max((t0 + t1) / 2, this.extent.t0), this.extent.t1);
      span = maxSpan;
      t0 = mid - span / 2;
      t1 = mid + span / 2;
    }
    const pad = ext * 0.05;
    if (t0 < this.extent.t0 - pad) [t0, t1] = [this.extent.t0 - pad, this.extent.t0 - pad + span];
    if (t1 > this.extent.t1 + pad) [t0, t1] = [this.extent.t1 + pad - span, this.extent.t1 + pad];
    return [t0, t1];
  }

  setView(t0, t1, {silent = false} = {}) {
    if (!(t1 > t0)) return;
    if (t1 - t0 < 20) {
      const mid = (t0 + t1) / 2;
      t0 = mid - 10;
      t1 = mid + 10;
    }
    [t0, t1] = this.bound(t0, t1);
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

  // Fetches the view at once (a pending fetchSoon is dropped: it would ask again for the same).
  fetchNow() {
    clearTimeout(this.fetchTimer);
    this.fetchTimer = null;
    return this.fetch();
  }

  viewParams() {
    return {
      t0: Math.floor(this.t0), t1: Math.ceil(this.t1), width: Math.round(this.trackWidth()),
      lanes: this.layout.allDrawn() ? undefined : this.layout.drawnLanes().join(','),
      flat: 1,  // each lane's items in one array, `stride` numbers an item
    };
  }

  async fetch() {
    if (this.layout.lanes.size === 0) return;  // nothing to show yet (or a trace without events)
    const seq = ++this.seq;
    const params = this.viewParams();
    const started = performance.now();
    try {
      const hl = this.highlight;
      const [d, marks] = await Promise.all([
        this.api.viewport(this.trace, params),
        hl ? this.api.marks(this.trace, hl.criticalPath ? {...params, critical_path: 1, ...hl.criticalPath}
             : {...params, q: hl.q, exact: hl.exact ? 1 : undefined, regex: hl.regex ? 1 : undefined,
                kind: hl.kind && hl.kind !== 'all' ? hl.kind : undefined}).catch(() => null) : null,
      ]);
      if (seq < this.accepted) return;
      this.accepted = seq;
      this.lastFetchMs = performance.now() - started;
      const data = {lanes: new Map(), counters: new Map(), memory: new Map(), strings: d.strings};
      for (const l of d.lanes) data.lanes.set(l.lane, withStride(l.items, d.stride));
      for (const c of d.counters) data.counters.set(c.lane, c.points);
      for (const m of d.memory || []) data.memory.set(m.lane, m.points);
      this.data = data;
      this.marks = marks ? new Map(marks.lanes.map((l) => [l.lane, l.items])) : null;
      this.draw();
      this.resolveFirstPaint();
    } catch (e) {
      console.error(e);
    }
  }

  // The critical path's overlay ({t0, t1, gaps: [{t0, t1, color, label}], covered}, from
  // critical_path.js's coverageOverlay): the step and the stretches the path leaves out, shaded
  // by cause; null to clear.
  setCoverage(coverage) {
    this.coverage = coverage;
    this.draw();
  }

  // Marks every event whose name matches: {q, regex, kind} as the search asks, {q, exact} the
  // whole name, or {criticalPath} the path's events; null clears.
  setHighlight(highlight) {
    this.highlight = highlight;
    this.marks = null;
    this.draw();
    this.fetchSoon();
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

  maxScroll() {
    return Math.max(0, this.layout.contentH - (this.height || 0) + this.scrollTop());
  }

  clampScroll() {
    this.scrollY = Math.min(Math.max(0, this.scrollY), this.maxScroll());
  }

  scrollTo(y) {
    this.scrollY = y;
    this.clampScroll();
    this.draw();
    this.onLayout();
  }

  xOf(t) {
    return LABEL_W + ((t - this.t0) / (this.t1 - this.t0)) * this.trackWidth();
  }

  tOf(x) {
    return this.t0 + ((x - LABEL_W) / this.trackWidth()) * (this.t1 - this.t0);
  }

  itemColor(name, ext, kind) {
    if (this.colorBy === 'ext') return colorFor('ext:' + ext);
    if (this.colorBy === 'kind') return kindColor(this.kinds[kind] || 'other');
    return colorFor(name);
  }

  draw() {
    if (!this.width) return;
    drawTimeline(this);
    this.onDraw(this);
  }

  hit(x, y) {
    for (let i = this.rects.length - 1; i >= 0; i--) {
      const r = this.rects[i];
      if (x >= r.x - 1 && x <= r.x + r.w + 1 && y >= r.y && y < r.y + r.h) return r;
    }
    return null;
  }

  control(x, y) {
    for (let i = this.controls.length - 1; i >= 0; i--) {
      const c = this.controls[i];
      if (x >= c.x && x < c.x + c.w && y >= c.y && y < c.y + c.h) return c;
    }
    return null;
  }

  laneAt(y) {
    for (const [id, L] of this.layout.lanes) {
      const sy = this.screenY(L);
      if (y >= sy && y < sy + L.h && (L.pinned ? y < this.scrollTop() : y >= this.scrollTop())) return id;
    }
    return null;
  }

  laneTitle(id) {
    const lane = this.layout.info.get(id);
    return lane ? lane.title : '';
  }

  // Client coordinates of the first drawn single event with this name (for tests and tours).
  locate(name) {
    const box = this.canvas.getBoundingClientRect();
    for (const r of this.rects) {
      if (r.name === name && r.item[5] === 1 && r.y >= this.scrollTop() && r.y + r.h <= this.height) {
        return {x: box.left + r.x + Math.min(r.w / 2, 20), y: box.top + r.y + r.h / 2, id: r.item[4]};
      }
    }
    return null;
  }

  // Screen position of a lane's row (null when it is not drawn), for tests.
  rowY(lane, row = 0) {
    const L = this.layout.lanes.get(lane);
    return L ? this.screenY(L) + row * ROW_H : null;
  }

  // Brings an event (a slice ref from the API) into view: opens its group and rows, zooms to it
  // and scrolls its row to the middle of the lanes area.
  reveal(ref, {zoom = true} = {}) {
    if (this.layout.ensureShown(ref.lane, ref.row || 0)) {
      this.layout.layout();
      this.onLayout();
    }
    if (zoom) {
      const dur = Math.max(ref.dur, 1000);
      this.setView(ref.ts - dur * 1.5, ref.ts + dur * 2.5);
    }
    const L = this.layout.lanes.get(ref.lane);
    if (L && !L.pinned) {
      const y = L.y + (ref.row || 0) * ROW_H;
      const view = this.height - this.scrollTop();
      if (y < this.scrollY + 24 || y + ROW_H > this.scrollY + view - 8) {
        this.scrollY = y - view / 2;
        this.clampScroll();
        this.onLayout();
      }
    }
    this.draw();
    this.fetchSoon();
  }

  // Stops listening (the canvas is being removed).
  destroy() {
    this.resizeObserver.disconnect();
    for (const [type, f] of Object.entries(this.windowListeners)) window.removeEventListener(type, f);
  }

  zoom(factor, at) {
    this.setView(at - (at - this.t0) * factor, at + (this.t1 - at) * factor);
  }

  pan(fraction) {
    const dt = (this.t1 - this.t0) * fraction;
    this.setView(this.t0 + dt, this.t1 + dt);
  }

  // Keyboard for the focused timeline: W/S zoom, A/D and arrows pan, up/down scroll lanes.
  // Returns false for keys it does not handle.
  key(k) {
    const mid = (this.t0 + this.t1) / 2;
    if (k === 'w') this.zoom(0.8, mid);
    else if (k === 's') this.zoom(1.25, mid);
    else if (k === 'a' || k === 'arrowleft') this.pan(-0.2);
    else if (k === 'd' || k === 'arrowright') this.pan(0.2);
    else if (k === 'arrowup') this.scrollTo(this.scrollY - 3 * ROW_H);
    else if (k === 'arrowdown') this.scrollTo(this.scrollY + 3 * ROW_H);
    else if (k === 'pageup') this.scrollTo(this.scrollY - (this.height - this.scrollTop()) * 0.9);
    else if (k === 'pagedown') this.scrollTo(this.scrollY + (this.height - this.scrollTop()) * 0.9);
    else return false;
    return true;
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
      if (e.shiftKey || p.x < LABEL_W) {
        this.scrollTo(this.scrollY + (e.deltaY || e.deltaX));
        return;
      }
      if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        this.pan(e.deltaX / this.trackWidth());
        return;
      }
      this.zoom(Math.exp(e.deltaY * 0.002), this.tOf(p.x));
    }, {passive: false});
    c.addEventListener('mousedown', (e) => {
      const p = local(e);
      const sb = this.scrollbar;
      if (sb && p.x >= sb.x) {
        down = {scrollbar: true, y: p.y, scrollY: this.scrollY, moved: true};
        return;
      }
      down = {x: p.x, y: p.y, t0: this.t0, t1: this.t1, box: e.shiftKey && p.x >= LABEL_W,
              labels: p.x < LABEL_W, moved: false};
    });
    this.windowListeners = {
      mousemove: (e) => this.onMove(local(e), e, down),
      mouseup: (e) => {
        if (!down) return;
        const d = down;
        down = null;
        this.onUp(local(e), d);
      },
    };
    for (const [type, f] of Object.entries(this.windowListeners)) window.addEventListener(type, f);
    c.addEventListener('mouseleave', () => {
      if (this.tooltip) this.tooltip.style.display = 'none';
      if (this.hoverLane !== null) {
        this.hoverLane = null;
        this.draw();
      }
    });
  }

  onMove(p, e, down) {
    if (!down) {
      if (e.target === this.canvas) this.hover(p, e);  // never from a hidden or other canvas
      return;
    }
    if (down.scrollbar) {
      const sb = this.scrollbar;
      if (sb) this.scrollTo(down.scrollY + ((p.y - down.y) / Math.max(1, sb.view - sb.h)) * (sb.content - sb.view));
      return;
    }
    if (Math.abs(p.x - down.x) + Math.abs(p.y - down.y) > 3) down.moved = true;
    if (!down.moved || down.labels) return;
    if (down.box) {
      const ta = this.tOf(Math.max(LABEL_W, Math.min(down.x, p.x)));
      const tb = this.tOf(Math.max(LABEL_W, Math.max(down.x, p.x)));
      this.box = {t0: ta, t1: tb, y0: Math.min(down.y, p.y) + this.scrollY, y1: Math.max(down.y, p.y) + this.scrollY};
      this.draw();
    } else {
      const dt = ((p.x - down.x) / this.trackWidth()) * (down.t1 - down.t0);
      this.setView(down.t0 - dt, down.t1 - dt);
    }
  }

  onUp(p, d) {
    if (d.scrollbar) return;
    if (d.moved && d.box && this.box) {
      const lanes = [];
      for (const [id, L] of this.layout.lanes) {
        const y = this.screenY(L) + this.scrollY;
        if (y + L.h >= this.box.y0 && y <= this.box.y1) lanes.push(id);
      }
      this.onBox({t0: Math.floor(this.box.t0), t1: Math.ceil(this.box.t1), lanes});
      return;
    }
    if (d.moved) return;
    const ctl = p.y >= this.lanesTop() ? this.control(p.x, p.y) : null;
    if (ctl) {
      if (ctl.action === 'group') this.toggleGroup(ctl.path);
      else if (ctl.action === 'pin') this.togglePin(ctl.lane);
      else if (ctl.action === 'rows') this.toggleRows(ctl.lane);
      else if (ctl.action === 'memory-peak') this.onMemoryPeak(ctl.lane);
      return;
    }
    if (p.x < LABEL_W) return;
    const r = this.hit(p.x, p.y);
    if (r && r.item[5] > 1) {
      // A merged block: zoom into it.
      this.setView(r.item[0] - r.item[1] * 0.1, r.item[0] + r.item[1] * 1.1);
      return;
    }
    this.box = null;
    this.onSelect(r ? r.item[4] : null, r);
  }

  hover(p, e) {
    const lane = p.x < LABEL_W ? this.laneAt(p.y) : null;
    if (lane !== this.hoverLane) {
      this.hoverLane = lane;
      this.draw();
    }
    if (!this.tooltip) return;
    let ctl = this.control(p.x, p.y);
    if (ctl && p.x >= LABEL_W && ctl.action !== 'memory-peak') ctl = null;
    const r = p.x >= LABEL_W ? this.hit(p.x, p.y) : null;
    const memLane = p.x >= LABEL_W && !r ? this.laneAt(p.y) : null;
    const memL = memLane !== null ? this.layout.lanes.get(memLane) : null;
    let lines = null;
    if (ctl && ctl.title) {
      lines = [ctl.title];
    } else if (memL && memL.lane.memory) {
      lines = memoryHoverLines(this, memL, this.tOf(p.x), this.data ? this.data.memory.get(memLane) || [] : []);
    } else if (lane !== null) {
      const info = this.layout.info.get(lane);
      lines = [info.title, `${info.events.toLocaleString()} events`];
    } else if (r && this.describe && this.describe(r)) {
      lines = this.describe(r);
    } else if (r) {
      const [ts, dur, , , , count, , busy] = r.item;
      lines = count > 1
        ? [`${count} events from ${r.name}`, `span ${fmtNs(dur)}, busy ${fmtNs(busy)}`, 'click to zoom in']
        : [r.name, `duration ${fmtNs(dur)}`, `start ${fmtNs(ts - this.offset)}`];
      lines.push(this.laneTitle(r.lane));
    }
    if (!lines) {
      this.tooltip.style.display = 'none';
      return;
    }
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
