// The NeuronCore tab: the report's `neuron_device` section (per engine instructions, busy time
// and utilization over the execution span, top opcodes, DMA traffic, the HBM peak, and whether the
// profile's own Summary / OpcodeSummary agree), from /api/trace/N/summary's figures: the same
// JSON `opscope report --json` prints under `neuron_device`. Shown only for traces that have it.
import {fmtNs, el} from './format.js';
import {sortableTable} from './tables.js';

const pct = (x) => `${(100 * x).toFixed(2)}%`;
const fmtBytes = (b) => (b >= 1e9 ? `${(b / 1e9).toFixed(2)} GB` : b >= 1e6 ? `${(b / 1e6).toFixed(2)} MB`
  : b >= 1e3 ? `${(b / 1e3).toFixed(1)} kB` : `${b} B`);
const count = (n) => Number(n).toLocaleString('en-US');

// nd: the `neuron_device` object; null when the trace has no Neuron device data.
export function renderNeuron(box, nd) {
  box.textContent = '';
  if (!nd) {
    box.append(el('p', {class: 'muted'}, 'This trace has no NeuronCore engine or DMA activity.'));
    return;
  }
  box.append(el('h3', {}, `NeuronCore engines (execution span ${fmtNs(nd.span_ns)}; busy = union of instruction times)`));
  const engines = nd.engines.map((e) => ({...e}));
  box.append(sortableTable([
    {key: 'device', title: 'device'}, {key: 'engine', title: 'engine'},
    {key: 'instructions', title: 'instructions', num: true, fmt: count},
    {key: 'busy_ns', title: 'busy', num: true, fmt: fmtNs}, {key: 'total_ns', title: 'sum', num: true, fmt: fmtNs},
    {key: 'utilization', title: 'utilization', num: true, cell: (td, r) => {
      td.append(el('span', {class: 'util-bar'}, el('span', {style: `width:${Math.min(100, 100 * r.utilization).toFixed(1)}%`})),
                ` ${pct(r.utilization)}`);
    }},
  ], engines, {sort: {key: 'busy_ns', desc: true}, id: 'neuron-engines'}));
  box.append(el('h3', {}, `Top opcodes by time (${nd.opcodes.length} in all)`));
  box.append(sortableTable([
    {key: 'total_ns', title: 'total', num: true, fmt: fmtNs}, {key: 'count', title: 'count', num: true, fmt: count},
    {key: 'engine', title: 'engine'}, {key: 'opcode', title: 'opcode'},
  ], nd.opcodes.map((o) => ({...o})), {sort: {key: 'total_ns', desc: true}, id: 'neuron-opcodes', limit: 30}));
  box.append(dma(nd.dma));
  if (nd.hbm) {
    const bw = nd.hbm.bandwidth_gbps ? `; HBM bandwidth ${nd.hbm.bandwidth_gbps.toFixed(1)} GB/s (Metadata)` : '';
    box.append(el('p', {id: 'neuron-hbm'}, `HBM in use at the peak: ${fmtBytes(nd.hbm.peak_bytes_in_use)} at ${fmtNs(nd.hbm.peak_ts_ns)}${bw}`));
  }
  if (nd.summary_checks.length) {
    box.append(el('h3', {}, 'The profile\'s own Summary / OpcodeSummary against the instructions'));
    box.append(sortableTable([
      {key: 'device', title: 'device'}, {key: 'figure', title: 'figure'},
      {key: 'profile', title: 'profile says', num: true}, {key: 'computed', title: 'computed', num: true},
      {key: 'agree', title: 'agree', cell: (td, r) => {
        td.textContent = r.agree ? 'yes' : 'NO';
        td.className = r.agree ? '' : 'disagree';
      }},
    ], nd.summary_checks.map((c) => ({...c})), {id: 'neuron-checks'}));
  }
  box.append(el('p', {class: 'muted'}, 'These figures are those of `opscope report --json` under `neuron_device` for this trace.'));
}

function dma(d) {
  const of = d.bandwidth_gbps ? ` (${pct(d.bandwidth_fraction)} of Metadata.dma_ddr_bandwidth ${d.bandwidth_gbps.toFixed(1)} GB/s)` : '';
  return el('p', {id: 'neuron-dma'}, d.packets
    ? `DMA: ${count(d.packets)} packets on ${d.queues} queues, ${fmtBytes(d.bytes)}, busy ${fmtNs(d.busy_ns)}, ${d.gbps.toFixed(2)} GB/s${of}`
    : 'DMA: no packets');
}
