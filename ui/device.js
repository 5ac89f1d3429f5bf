// The Device tab: for a Neuron execution, its engine and DMA queue lanes (coloured by the op
// that issued each instruction) with per-engine utilisation and the launch before the first instruction marked;
// for CUDA-style traces, the selection's kernels on the streams of their device. Clicking an
// event keeps the zoom and shows its details beside the lanes.
import {fmtNs, el, colorFor} from './format.js';
import {shortName} from './names.js';
import {Timeline} from './timeline.js';
import {detailsTable, argsBlock} from './panels.js';

export class DeviceView {
  // app: {api, tooltip, lanes() (the trace's lanes answer), trace(), neuron()}
  constructor(app) {
    this.app = app;
    this.timeline = null;
    this.loadedFor = null;
    this.legend = document.getElementById('device-legend');
    this.stats = document.getElementById('device-stats');
    this.details = document.getElementById('device-details');
    this.canvas = document.getElementById('device-canvas');
    this.wrap = document.getElementById('device-wrap');
  }

  reset() {
    this.loadedFor = null;
  }

  message(text) {
    this.legend.textContent = text;
    this.stats.textContent = '';
    this.details.textContent = '';
    this.wrap.hidden = true;
  }

  async load(sel) {
    if (sel === null) {
      this.loadedFor = null;
      this.message(this.app.neuron()
        ? 'Select a device execution (nc_exec_running), or an op that launched one, to see its engine and DMA queue lanes.'
        : 'Select a kernel, or an op that launched kernels, to see the kernels per stream on its device.');
      return;
    }
    if (this.loadedFor === sel) return;
    this.loadedFor = sel;
    let d;
    try {
      d = await this.app.api.device(this.app.trace(), sel);
    } catch (e) {
      this.message(`device view: ${e.message}`);
      return;
    }
    if (this.loadedFor !== sel) return;
    if (!d.execution) {
      this.message(this.app.neuron() ? 'The selected event reaches no device execution.'
                                     : 'The selected event launched no kernel (no device activity is linked to it).');
      return;
    }
    this.render(d);
  }

  render(d) {
    this.wrap.hidden = false;
    this.details.textContent = '';
    this.legend.textContent = '';
    const lanes = this.app.lanes();
    const titles = new Map();
    for (const g of lanes.groups) for (const l of g.lanes) titles.set(l.id, l.title);
    if (d.mode === 'engines') {
      this.legend.append(el('span', {}, `${d.execution.name} (${fmtNs(d.execution.dur)}): engine instructions, coloured by the framework op that issued each: `));
      for (const op of d.ops) {
        this.legend.append(el('span', {class: 'legend-item', 'data-ext': op.ext},
                              el('span', {class: 'swatch', style: `background:${colorFor('ext:' + op.ext)}`}), `${op.name} (${op.count})`));
      }
    } else {
      const streams = d.utilization.filter((u) => u.events > 0).length;
      this.legend.append(el('span', {}, `Kernels per stream: ${d.executions} kernel${d.executions === 1 ? '' : 's'} of the selection ` +
                                        `(first: ${shortName(d.execution.name)}) on ${streams} of the device's ${d.lanes.length} streams, ` +
                                        `over ${fmtNs(d.t1 - d.t0)}; every kernel in that span is drawn.`));
    }
    this.renderStats(d, titles);
    this.renderLanes(d, lanes);
  }

  renderStats(d, titles) {
    const span = d.t1 - d.t0;
    // Lane titles without the device they share ("NEURON 0 · DMA queue 3" -> "DMA queue 3").
    const names = d.utilization.map((u) => titles.get(u.lane) || String(u.lane));
    const cut = names.length && names.every((n) => n.startsWith(names[0].split(' · ')[0] + ' · ')) ? names[0].split(' · ')[0].length + 3 : 0;
    const pct = (u) => {
      const p = (100 * u.busy_ns) / span;
      return `${p < 10 ? p.toFixed(1) : p.toFixed(0)}%`;
    };
    const t = el('table', {class: 'grid', id: 'device-util'},
                 el('tr', {}, el('th', {}, d.mode === 'engines' ? 'engine / queue' : 'stream'),
                    el('th', {class: 'num'}, d.mode === 'engines' ? 'instructions' : 'events'),
                    el('th', {class: 'num'}, 'busy'), el('th', {class: 'num', title: `of the ${fmtNs(span)} shown`}, 'utilisation')));
    d.utilization.forEach((u, i) => {
      t.append(el('tr', {'data-lane': u.lane}, el('td', {}, names[i].slice(cut)), el('td', {class: 'num'}, u.events),
                  el('td', {class: 'num'}, fmtNs(u.busy_ns)), el('td', {class: 'num'}, pct(u))));
    });
    this.pct = pct;
    this.stats.textContent = '';
    if (d.launch) {
      const all = d.phases || [];
      const engines = all.findIndex((p) => p.name === 'engines');
      const phases = engines < 0 ? all.filter((p) => p.name !== 'completion') : all.slice(0, engines);
      const list = phases.length ? phases.map((p) => `${p.name} ${fmtNs(p.dur)}`).join(', ') : 'program launch and setup';
      this.stats.append(el('p', {class: 'launch-note'},
                           `Launch: ${fmtNs(d.launch.t1 - d.launch.t0)} from the start of the execution to its first instruction ` +
                           `(the device model's execution phases before the engines: ${list})` +
                           (d.completion ? `; completion after the last instruction: ${fmtNs(d.completion.t1 - d.completion.t0)}.` : '.')));
    }
    this.stats.append(t);
  }

  renderLanes(d, lanes) {
    if (!this.timeline) {
      this.timeline = new Timeline(this.canvas, {
        api: this.app.api, trace: this.app.trace(), showGroups: false, tooltip: this.app.tooltip,
        onSelect: (id) => this.showEvent(id),
      });
      this.canvas.addEventListener('mouseenter', () => this.app.focus(this.timeline));
    }
    const tl = this.timeline;
    tl.trace = this.app.trace();
    tl.colorBy = d.mode === 'engines' ? 'ext' : 'name';
    tl.selected = d.mode === 'engines' ? null : d.execution.id;
    tl.labelSuffix = new Map(d.utilization.map((u) => [u.lane, this.pct(u)]));
    tl.annotations = [];
    if (d.launch) tl.annotations.push({...d.launch, label: 'launch (before the first instruction)', color: 'rgba(230, 140, 40, 0.16)'});
    if (d.completion) tl.annotations.push({...d.completion, label: 'completion', color: 'rgba(120, 120, 140, 0.14)'});
    tl.setLanes(lanes, d.lanes);
    // Every lane fits the pane: its height follows the lanes.
    this.wrap.style.height = `${tl.scrollTop() + tl.layout.contentH + 4}px`;
    tl.offset = d.t0;
    const pad = (d.t1 - d.t0) * 0.03;
    tl.extent = {t0: d.t0 - pad, t1: d.t1 + pad};
    tl.resize();
    tl.setView(d.t0 - pad, d.t1 + pad);
  }

  async showEvent(id) {
    const tl = this.timeline;
    tl.selected = id;
    tl.draw();
    this.details.textContent = '';
    if (id === null) return;
    try {
      const s = await this.app.api.slice(this.app.trace(), id);
      this.details.append(el('h4', {}, s.name), detailsTable(s, tl.offset));
      const args = argsBlock(s);
      if (args) this.details.append(args);
      this.details.append(el('button', {class: 'event-link', onclick: () => this.app.jump(s)}, 'show on the main timeline'));
      this.details.dataset.selectedId = id;
    } catch (e) {
      this.details.textContent = `event ${id}: ${e.message}`;
    }
  }
}
