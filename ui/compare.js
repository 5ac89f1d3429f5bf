// The Compare tab: two or three traces stacked at full width, sharing the vertical space, each
// with its device lanes first and time axes synchronised relative to an anchor each (trace
// start, or the first event matching the alignment pattern); below, the diff of the pair A -> B
// as `opscope diff` computes it.
import {el} from './format.js';
import {Timeline} from './timeline.js';
import {renderDiff} from './tables.js';

const DEVICE_FIRST = ['hardware', 'engines', 'runtime', 'interaction', 'framework', 'counters'];

export class CompareView {
  // app: {api, info(), tooltip, focus(tl), changed(), message(text)}
  constructor(app) {
    this.app = app;
    this.timelines = [];
    this.pair = null;  // [a, b] or [a, b, c]: trace indices
    this.align = '';
    this.shownFor = '';
  }

  // Indices of the traces shown: the pair from the URL, or the first two (three) open traces.
  selection() {
    const n = this.app.info().traces.length;
    if (this.pair) return this.pair;
    return n >= 3 ? [0, 1, 2] : [0, 1];
  }

  async load() {
    const box = document.getElementById('compare-lanes');
    const traces = this.app.info().traces;
    if (traces.length < 2) {
      box.textContent = 'Open two or three traces (opscope explore A B [C]) to compare them.';
      return;
    }
    this.renderSelects();
    const shown = this.selection();
    const key = shown.join(',');
    if (this.shownFor !== key) {
      this.shownFor = key;
      await this.buildPanes(box, shown);
      if (this.align) await this.alignAt(this.align, {quiet: true});
    }
    await this.loadDiff();
  }

  renderSelects() {
    const traces = this.app.info().traces;
    const shown = this.selection();
    const fill = (id, value, optional) => {
      const s = document.getElementById(id);
      s.textContent = '';
      if (optional) s.append(el('option', {value: ''}, '(none)'));
      traces.forEach((t, i) => s.append(el('option', {value: i}, `${i}: ${t.name}`)));
      s.value = value === undefined ? '' : String(value);
      s.onchange = () => this.choose();
    };
    fill('diff-a', shown[0]);
    fill('diff-b', shown[1]);
    fill('diff-c', shown[2], true);
    document.getElementById('align').value = this.align;
  }

  async choose() {
    const a = Number(document.getElementById('diff-a').value);
    const b = Number(document.getElementById('diff-b').value);
    const cText = document.getElementById('diff-c').value;
    if (a === b) {
      this.app.message('Choose two different traces for A and B.');
      return;
    }
    this.pair = cText === '' || Number(cText) === a || Number(cText) === b ? [a, b] : [a, b, Number(cText)];
    this.app.changed();
    await this.load();
  }

  async buildPanes(box, shown) {
    const key = shown.join(',');
    const traces = this.app.info().traces;
    const lanesList = await Promise.all(shown.map((i) => this.app.api.lanes(i)));
    if (this.shownFor !== key) return;  // another pair was chosen meanwhile
    box.textContent = '';
    for (const tl of this.timelines) tl.destroy();
    this.timelines = [];
    let syncing = false;
    const sync = (src, t0, t1) => {
      if (syncing) return;
      syncing = true;
      for (const tl of this.timelines) if (tl !== src) tl.setView(tl.offset + (t0 - src.offset), tl.offset + (t1 - src.offset));
      syncing = false;
    };
    const span = Math.max(...lanesList.map((l) => l.trace.end_ns - l.trace.start_ns));
    shown.forEach((index, i) => {
      const title = el('div', {class: 'compare-title'}, `${String.fromCharCode(65 + i)}: ${traces[index].name}`);
      const canvasBox = el('div', {class: 'compare-canvas'});
      const canvas = el('canvas', {'data-trace': index});
      canvasBox.append(canvas);
      box.append(el('div', {class: 'compare-item', 'data-pane': i}, title, canvasBox));
      const tl = new Timeline(canvas, {api: this.app.api, trace: index, tooltip: this.app.tooltip, groupOrder: DEVICE_FIRST,
                                       collapsed: ['engines', 'counters'], onView: (a, b) => sync(tl, a, b)});
      tl.setLanes(lanesList[i]);
      tl.traceRange = {t0: lanesList[i].trace.start_ns, t1: lanesList[i].trace.end_ns};
      tl.offset = tl.traceRange.t0;
      canvas.addEventListener('mouseenter', () => this.app.focus(tl));
      this.timelines.push(tl);
    });
    this.setExtents();
    for (const tl of this.timelines) {
      tl.resize();
      tl.setView(tl.offset, tl.offset + span, {silent: true});
    }
  }

  // One extent for every pane, relative to its anchor, so bounding the zoom keeps them in step.
  setExtents() {
    const lo = Math.min(...this.timelines.map((tl) => tl.traceRange.t0 - tl.offset));
    const hi = Math.max(...this.timelines.map((tl) => tl.traceRange.t1 - tl.offset));
    for (const tl of this.timelines) tl.extent = {t0: tl.offset + lo, t1: tl.offset + hi};
  }

  async alignAt(q, {quiet = false} = {}) {
    this.align = q;
    const results = await Promise.all(this.timelines.map((tl) => (q ? this.app.api.search(tl.trace, {q, regex: 1, limit: 1}).catch(() => null) : null)));
    const missing = [];
    this.timelines.forEach((tl, i) => {
      const r = results[i];
      const found = r && r.events.length;
      tl.offset = found ? r.events[0].ts : tl.traceRange.t0;
      if (q && !found) missing.push(String.fromCharCode(65 + i));
    });
    this.setExtents();
    const first = this.timelines[0];
    const span = first.t1 - first.t0;
    for (const tl of this.timelines) tl.setView(tl.offset - span * 0.05, tl.offset + span * 0.95, {silent: true});
    if (!quiet) this.app.changed();
    if (missing.length) this.app.message(`align=${q}: no event matches in ${missing.join(', ')}; aligned at trace start there`);
    return q ? `aligned at the first event matching /${q}/` : 'aligned at trace start';
  }

  async loadDiff() {
    const [a, b] = this.selection();
    const traces = this.app.info().traces;
    const box = document.getElementById('diff');
    try {
      const d = await this.app.api.diff(a, b);
      renderDiff(box, d, traces[a].name, traces[b].name);
    } catch (e) {
      box.textContent = `diff: ${e.message}`;
    }
  }
}
