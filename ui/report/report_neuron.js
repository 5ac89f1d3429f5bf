// The HTML report's NeuronCore section, from the embedded report's `neuron_device` object (the
// same JSON `opscope report --json` prints): per engine utilization as bars and a table, the top
// opcodes, DMA traffic against the profile's bandwidth, the HBM peak, and whether the profile's own
// Summary / OpcodeSummary agree with the instructions. Absent when the trace has no Neuron device
// data.
'use strict';
(function (R) {
  const el = R.el;

  function dmaLine(d) {
    if (!d || !d.packets) return el('p', {class: 'muted'}, 'DMA: no packets.');
    const of = d.bandwidth_gbps
        ? ` (${R.fmtPct(100 * d.bandwidth_fraction)} of Metadata.dma_ddr_bandwidth ${R.fmtNum(d.bandwidth_gbps)} GB/s)` : '';
    return el('p', {'data-neuron': 'dma'}, `DMA: ${d.packets} packets on ${d.queues} queues, ${R.fmtBytes(d.bytes)}, ` +
              `busy ${R.fmtNs(d.busy_ns)}, ${R.fmtNum(d.gbps)} GB/s${of}`);
  }

  R.neuronSection = function (nd) {
    if (!nd) return null;
    const engines = nd.engines.map((e) => Object.assign({}, e, {utilization_percent: 100 * e.utilization}));
    const chart = engines.length
        ? R.hbars('neuron-engines', 'Engine utilization', '(busy time over the execution span)',
                  engines.map((e) => ({label: `${e.device} ${e.engine}`, value: e.utilization_percent,
                                       tip: [e.engine, `${e.instructions} instructions`, `busy ${R.fmtNs(e.busy_ns)}`]})),
                  (v) => R.fmtPct(v))
        : el('p', {class: 'muted'}, 'No engine instructions.');
    const parts = [
      chart,
      R.rowsTable('neuron_engines', engines, {first: ['device', 'engine', 'instructions', 'busy_ns', 'utilization_percent']}),
      el('h3', {}, `Top opcodes by time (${nd.opcodes.length} in all)`),
      R.rowsTable('neuron_opcodes', nd.opcodes, {first: ['opcode', 'engine', 'count', 'total_ns']}),
      dmaLine(nd.dma),
    ];
    if (nd.hbm) {
      parts.push(el('p', {'data-neuron': 'hbm'}, `HBM in use at the peak: ${R.fmtBytes(nd.hbm.peak_bytes_in_use)} at ${R.fmtNs(nd.hbm.peak_ts_ns)}` +
                    (nd.hbm.bandwidth_gbps ? `; HBM bandwidth ${R.fmtNum(nd.hbm.bandwidth_gbps)} GB/s (Metadata)` : '')));
    }
    if (nd.summary_checks && nd.summary_checks.length) {
      parts.push(el('h3', {}, 'The profile\'s own Summary / OpcodeSummary against the instructions'),
                 R.rowsTable('neuron_summary_checks', nd.summary_checks.map((c) => Object.assign({}, c, {agree: c.agree ? 'yes' : 'NO'})),
                             {first: ['device', 'figure', 'profile', 'computed', 'agree']}));
    }
    return R.section('neuron', 'NeuronCore', `Per engine instructions and busy time (union of instruction intervals) over the execution span of ${R.fmtNs(nd.span_ns)}, as opscope report prints it.`,
                     ...parts);
  };
})(window.OpscopeReport = window.OpscopeReport || {});
