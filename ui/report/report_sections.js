// The HTML report's sections for one trace: each a chart of the embedded `report --json`
// document (and of the chart data beside it) with its table, columns named as the JSON names them.
'use strict';
(function (R) {
  const el = R.el;

  // A section of the page, listed in the contents.
  R.section = function (id, title, intro, ...children) {
    R.toc.push([id, title]);
    return el('section', {id}, el('h2', {}, title), intro ? el('p', {class: 'muted'}, intro) : null, ...children);
  };

  // How a column of the JSON reads, from its key.
  function formatterFor(key) {
    if (/_ns$/.test(key)) return (v) => (typeof v === 'number' ? R.fmtNs(v) : v);
    if (/_us$|_us_sum$/.test(key)) return (v) => (typeof v === 'number' ? R.fmtUs(v) : v);
    if (/(^|_)(percent|pct)($|_)/.test(key)) return (v) => (typeof v === 'number' ? R.fmtPct(v) : v);
    if (/bytes$|^peak_allocated$|^peak_reserved$|^allocated_at_start$/.test(key)) return R.fmtBytes;
    return (v) => (typeof v === 'number' ? R.fmtNum(v) : v === null || v === undefined ? '-' : String(v));
  }

  // Columns for every key of the rows whose values are plain (nested objects and lists are in the
  // JSON, not the table); `first` keys lead.
  R.columns = function (rows, first = []) {
    const keys = [];
    for (const r of rows) {
      for (const [k, v] of Object.entries(r)) {
        if (!keys.includes(k) && (v === null || typeof v !== 'object')) keys.push(k);
      }
    }
    const ordered = first.filter((k) => keys.includes(k)).concat(keys.filter((k) => !first.includes(k)));
    return ordered.map((k) => ({
      key: k, label: k, fmt: formatterFor(k),
      num: rows.some((r) => typeof r[k] === 'number'),
    }));
  };
  R.rowsTable = (name, rows, opts = {}) => R.table(name, R.columns(rows, opts.first), rows, opts);

  R.kv = function (obj) {
    const t = el('table', {class: 'kv'});
    for (const [k, v] of Object.entries(obj)) {
      if (v !== null && typeof v === 'object') continue;
      t.append(el('tr', {}, el('th', {}, k), el('td', {}, formatterFor(k)(v))));
    }
    return t;
  };

  const TIMELINE_PARTS = [
    {key: 'computation_ns', label: 'computation', color: R.colors.computation},
    {key: 'exposed_comm_ns', label: 'exposed communication', color: R.colors.communication},
    {key: 'exposed_memcpy_ns', label: 'exposed memcpy', color: R.colors.memcpy},
    {key: 'idle_ns', label: 'idle', color: R.colors.idle},
  ];

  function timelineSection(rep, charts) {
    const devices = rep.device_timelines || (charts.device_timelines || []);
    const rows = [Object.assign({device: 'all devices'}, rep.device_timeline)];
    if (devices.length > 1) rows.push(...devices);
    if (!rep.device_timeline || !rep.device_timeline.total_ns) {
      return R.section('timeline', 'Device timeline', 'No device activity is linked to a runtime call in this trace.',
                       R.rowsTable('device_timeline', rows, {first: ['device']}));
    }
    const chart = R.stacked('timeline-breakdown', 'Where device time goes', '(TraceLens gpu_timeline; shares of the span from first to last activity)',
                            rows.map((r) => ({label: r.device, values: r})), TIMELINE_PARTS, R.fmtNs);
    return R.section('timeline', 'Device timeline', null, chart,
                     R.rowsTable('device_timeline', rows, {first: ['device']}));
  }

  function overviewSection(ov) {
    if (!ov || !ov.tracks || !ov.tracks.length) return null;
    const caption = `(${ov.tracks.length} tracks, device streams first; ${ov.columns} columns of ` +
        `${R.fmtNs((ov.end_ns - ov.start_ns) / ov.columns)} each, a pixel shows its busiest column` +
        (ov.omitted_tracks ? `; ${ov.omitted_tracks} more tracks left out` : '') + ')';
    return R.section('overview', 'Overview timeline', 'Each row is a stream or thread over the whole trace: opaque where busy, coloured by the slice covering most of the time.',
                     R.strips('overview', 'Activity per stream', caption, ov));
  }

  function topSection(id, title, rows, label, value, fmt, table, tip) {
    const top = rows.filter((r) => value(r) > 0).sort((a, b) => value(b) - value(a)).slice(0, 15);
    const chart = top.length
        ? R.hbars('top-' + id, title, '(the 15 largest)', top.map((r) => ({label: label(r), value: value(r), tip: tip ? tip(r) : null})), fmt)
        : el('p', {class: 'muted'}, 'Nothing with time here.');
    return R.section(id, title, null, chart, table);
  }

  function rooflineSection(rep) {
    if (!rep.perf_model) return null;
    const rows = rep.perf_model.filter((r) => r.flops_per_byte > 0 && r.tflops_per_s_mean > 0);
    const table = R.rowsTable('perf_model', rep.perf_model, {first: ['name', 'category', 'count']});
    const spec = rep.device_spec;
    if (!rows.length) {
      return R.section('roofline', 'Performance model and roofline', 'No op has a performance model with device time (record with record_shapes for GFLOPS and bytes).', table);
    }
    const ops = {label: 'ops', color: '#1d2a44', line: false,
                 xs: rows.map((r) => r.flops_per_byte), ys: rows.map((r) => r.tflops_per_s_mean),
                 tips: rows.map((r) => `${r.name} ${r.input_dims || ''}: ${R.fmtNum(r.tflops_per_s_mean)} TFLOPS/s at ${R.fmtNum(r.flops_per_byte)} FLOP/B${r.bound ? ', ' + r.bound + '-bound' : ''}`)};
    const series = [ops];
    if (spec && spec.mem_bw_gbps > 0) {
      const lo = Math.min(...ops.xs) / 4, hi = Math.max(...ops.xs) * 4, xs = [];
      for (let k = 0; k <= 48; ++k) xs.push(lo * (hi / lo) ** (k / 48));
      const used = new Set(rows.map((r) => r.compute_spec).filter((s) => s && spec.tflops[s] > 0));
      if (!used.size) used.add(Object.keys(spec.tflops).sort((a, b) => spec.tflops[b] - spec.tflops[a])[0]);
      for (const cs of used) {
        const peak = spec.tflops[cs];
        series.push({label: `roof ${cs}`, color: R.colorFor(cs), xs,
                     ys: xs.map((x) => Math.min(peak, (spec.mem_bw_gbps / 1000) * x)),
                     tips: xs.map(() => `${spec.name} ${cs}: ${peak} TFLOPS, ${spec.mem_bw_gbps} GB/s`)});
      }
    }
    const caption = spec ? `(${spec.name}: ${spec.mem_bw_gbps} GB/s; ${spec.source})` : '(no device spec: --device-spec NAME draws the roofs)';
    const chart = R.xy('roofline', 'Roofline: achieved TFLOPS/s against arithmetic intensity', caption, {
      x: {label: 'FLOP per byte', log: true}, y: {label: 'TFLOPS/s', log: true}, height: 340,
      series: R.alignSeries(series)});
    return R.section('roofline', 'Performance model and roofline', 'Each modeled op (perf_model rows) as a point; the roofs are the device\'s memory bandwidth and peak compute.', chart, table);
  }

  function idleSection(rep) {
    if (!rep.idle_breakdown || !rep.idle_breakdown.length) return null;
    const parts = [{key: 'host_wait_us', label: 'host wait', color: R.colors.host_wait},
                   {key: 'kernel_wait_us', label: 'kernel wait', color: R.colors.kernel_wait},
                   {key: 'other_us', label: 'other', color: R.colors.other}];
    const rows = rep.idle_breakdown.map((r) => ({label: `device ${r.device} stream ${r.stream}`, values: r}));
    return R.section('idle', 'Idle time per stream', 'Why each stream waited (HTA idle time breakdown): on the host, between kernels, or other.',
                     R.stacked('idle', 'Idle time causes per stream', null, rows, parts, R.fmtUs),
                     R.rowsTable('idle_breakdown', rep.idle_breakdown));
  }

  function criticalPathSection(rep) {
    const cp = rep.critical_path;
    if (!cp) return null;
    if (!cp.ok) return R.section('critical-path', 'Critical path', 'No critical path: ' + cp.error);
    // Times in ns (older documents: us).
    const ns = cp.length_ns !== undefined;
    const fmt = ns ? R.fmtNs : R.fmtUs;
    const parts = Object.keys(cp.breakdown).map((k, i) => ({key: k, label: k.replace(/_[nu]s$/, ''), color: R.colorFor('cp' + i)}));
    return R.section('critical-path', 'Critical path', `Step "${cp.step || 'whole trace'}": ${fmt(ns ? cp.length_ns : cp.length_us)} on the path (HTA critical path analysis).`,
                     R.stacked('critical-path', 'What bounds the path', null, [{label: 'path', values: cp.breakdown}], parts, fmt),
                     R.rowsTable('critical_path_events', cp.events || [], {first: ['name', 'bound_by', ns ? 'on_path_ns' : 'on_path_us']}));
  }

  function memorySection(mem) {
    if (!mem || !mem.devices || !mem.devices.length) return null;
    const parts = [];
    for (const d of mem.devices) {
      if (!d.samples || !d.samples.length) continue;
      const t0 = d.samples[0][0];
      const series = [{label: 'allocated', color: R.colors.computation, xs: d.samples.map((s) => s[0] - t0),
                       ys: d.samples.map((s) => s[1]), tips: d.samples.map((s) => `allocated ${R.fmtBytes(s[1])}`)}];
      if (d.samples.some((s) => s[2] >= 0)) {
        series.push({label: 'reserved', color: R.colors.communication, xs: series[0].xs,
                     ys: d.samples.map((s) => (s[2] >= 0 ? s[2] : null)), tips: d.samples.map((s) => `reserved ${R.fmtBytes(s[2])}`)});
      }
      series.push({label: 'peak', color: R.colors.candidate, line: false, xs: [d.peak_ts_ns - t0], ys: [d.peak_allocated],
                   tips: [`peak ${R.fmtBytes(d.peak_allocated)} at ${R.fmtNs(d.peak_ts_ns - t0)}`]});
      parts.push(R.xy('memory-' + parts.length, `${d.device}: memory over time`,
                      `(peak ${R.fmtBytes(d.peak_allocated)}; at most ${2 * Math.floor((R.doc.charts.memory_points || 2000) / 2)} points, each bucket's low and high)`,
                      {x: {label: 'time since the first event', fmt: R.fmtNs}, y: {label: 'bytes', fmt: R.fmtBytes}, series: R.alignSeries(series)}));
      parts.push(el('h3', {}, `Ops holding the most at ${d.device}'s peak`),
                 R.rowsTable('holders-' + d.device, d.holders_at_peak || [], {first: ['op', 'bytes']}));
    }
    return R.section('memory', 'Memory', 'Allocated and reserved bytes per device from the [memory] events (profile_memory).',
                     R.rowsTable('memory', mem.devices, {first: ['device', 'peak_allocated']}), ...parts);
  }

  function launchTable(l) {
    const rows = (l.by_name || []).concat([{name: '(all)', duration: l.duration, launch_delay: l.launch_delay}]).map((r) => {
      const flat = {name: r.name};
      for (const [k, v] of Object.entries(r.duration || {})) flat['duration_' + k] = v;
      for (const [k, v] of Object.entries(r.launch_delay || {})) flat['launch_delay_' + k] = v;
      return flat;
    });
    return R.rowsTable('launches', rows, {first: ['name']});
  }

  R.traceSections = function (doc) {
    const rep = doc.report, charts = doc.charts || {};
    const ops = (rep.ops && rep.ops.rows) || [], kernels = (rep.kernels && rep.kernels.rows) || [];
    const ka = (rep.key_averages && rep.key_averages.rows) || [];
    return [
      R.section('summary', 'Trace', null, R.kv({file: rep.file, trace_name: rep.trace_name, device_type: rep.device_type,
                                                 skipped_events: rep.skipped_events})),
      timelineSection(rep, charts),
      overviewSection(charts.overview),
      topSection('ops', 'Top ops by device time', ops, (r) => r.name, (r) => r.direct_device_ns, R.fmtNs,
                 R.rowsTable('ops', ops, {first: ['name', 'direct_device_ns']})),
      topSection('kernels', 'Top kernels by total time', kernels, (r) => r.kernel, (r) => r.sum_ns, R.fmtNs,
                 R.rowsTable('kernels', kernels, {first: ['kernel', 'parent_op', 'sum_ns']}),
                 (r) => [r.kernel, `launched by ${r.parent_op || '(no launcher)'} on stream ${r.stream}`, `${r.count} x, ${R.fmtNs(r.sum_ns)}`]),
      R.neuronSection ? R.neuronSection(rep.neuron_device) : null,
      rooflineSection(rep),
      idleSection(rep),
      criticalPathSection(rep),
      memorySection(charts.memory),
      R.section('key-averages', 'key_averages', 'torch.profiler\'s table, as opscope report prints it.',
                R.rowsTable('key_averages', ka, {first: ['name']})),
      rep.launches ? R.section('launches', 'Launch statistics', null, launchTable(rep.launches)) : null,
    ];
  };
})(window.OpscopeReport = window.OpscopeReport || {});
