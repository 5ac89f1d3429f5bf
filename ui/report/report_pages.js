// The HTML report's pages for a job, a diff (of traces or jobs) and a check: charts of the
// embedded JSON document (`report DIR --json`, `diff --json`, `check --json`) with its tables.
'use strict';
(function (R) {
  const el = R.el;

  R.jobSections = function (doc) {
    const job = doc.report;
    const out = [R.section('summary', 'Job', null,
                           R.kv({world_size: job.world_size, device_type: job.device_type, steps: job.steps,
                                 partial: job.partial, clocks_aligned: job.clocks_aligned}),
                           job.findings && job.findings.length ? el('ul', {class: 'findings'}, ...job.findings.map((f) => el('li', {}, f))) : null,
                           (job.warnings || []).length ? el('ul', {class: 'warnings'}, ...job.warnings.map((w) => el('li', {}, w))) : null)];
    const ranks = job.ranks || [];
    const parts = [{key: 'computation_us', label: 'computation', color: R.colors.computation},
                   {key: 'exposed_communication_us', label: 'exposed communication', color: R.colors.communication},
                   {key: 'exposed_memcpy_us', label: 'exposed memcpy', color: R.colors.memcpy},
                   {key: 'idle_us', label: 'idle', color: R.colors.idle}];
    out.push(R.section('ranks', 'Ranks', 'Each rank\'s device timeline.',
                       R.stacked('ranks', 'Device time per rank', null, ranks.map((r) => ({label: 'rank ' + r.rank, values: r})), parts, R.fmtUs),
                       R.rowsTable('ranks', ranks, {first: ['rank']})));
    const steps = job.step_numbers || [], waits = job.step_wait || [];
    if (steps.length && waits.length) {
      out.push(R.section('heatmap', 'Ranks x steps', 'Each rank\'s sync wait per step: the time it waited at collectives for the last rank to arrive.',
                         R.heatmap('heatmap', 'Sync wait per rank and step', '(darker: longer)', waits.map((w) => 'rank ' + w.rank), steps,
                                   waits.map((w) => w.wait_us.map((v) => (v === null || v < 0 ? null : v))), R.fmtUs)));
    }
    const summary = job.collective_summary || [];
    if (summary.length) {
      out.push(R.section('skew', 'Collective skew', 'Per collective (name and size): how far apart the ranks arrived.',
                         R.stacked('skew', 'Skew per collective', '(mean and the rest up to the max)',
                                   summary.map((s) => ({label: `${s.name} ${R.fmtBytes(s.bytes)} x${s.count}`,
                                                        values: {mean: s.mean_skew_us, to_max: Math.max(0, s.max_skew_us - s.mean_skew_us)}})),
                                   [{key: 'mean', label: 'mean skew', color: R.colors.communication}, {key: 'to_max', label: 'up to max skew', color: '#f3c3a3'}], R.fmtUs),
                         R.rowsTable('collective_summary', summary, {first: ['name', 'bytes']})));
    }
    const stragglers = (job.stragglers || []).filter((s) => s.wait_caused_us > 0);
    out.push(R.section('stragglers', 'Stragglers', 'Ranks that made the others wait, with the evidence.',
                       stragglers.length ? R.hbars('stragglers', 'Wait caused per rank', null,
                                                   stragglers.map((s) => ({label: 'rank ' + s.rank, value: s.wait_caused_us, color: R.colors.worse})), R.fmtUs)
                                         : el('p', {class: 'muted'}, 'No rank made the others wait.'),
                       R.rowsTable('stragglers', job.stragglers || [], {first: ['rank']})));
    out.push(R.section('ops', 'Ops across ranks', null, R.rowsTable('ops', job.ops || [], {first: ['name']})),
             R.section('collectives', 'Collectives', 'Every collective instance, matched across ranks by (group, seq).',
                       R.rowsTable('collectives', job.collectives || [], {first: ['group', 'seq', 'name']})));
    return out;
  };

  // The rows of a trace diff that moved most, as diverging bars and tables.
  function traceDiffSections(diff, names) {
    const ops = diff.rows || [], kernels = diff.kernels || [];
    const opValue = (r) => (r.device_ns_a || r.device_ns_b ? [r.device_ns_a, r.device_ns_b] : [r.cpu_ns_a, r.cpu_ns_b]);
    const moved = (rows, label, value) => rows.slice(0, 20).map((r) => ({label: label(r), a: value(r)[0], b: value(r)[1]}));
    const ta = diff.timeline_a || {}, tb = diff.timeline_b || {};
    return [
      R.section('diff-summary', 'Diff', names ? `${names[0]} (A, the baseline) -> ${names[1]} (B)` : null,
                R.rowsTable('diff_timelines', [Object.assign({side: 'A'}, ta), Object.assign({side: 'B'}, tb)], {first: ['side']})),
      R.section('moved-ops', 'Ops that moved', 'Added, removed and changed ops by impact (device time where either side has some, else host time).',
                ops.length ? R.diverging('moved-ops', 'Ops: B - A', '(the 20 of largest impact)', moved(ops, (r) => r.name, opValue), R.fmtNs)
                           : el('p', {class: 'muted'}, 'No op differs.'),
                R.rowsTable('diff_rows', ops, {first: ['name', 'change', 'impact_ns']})),
      R.section('moved-kernels', 'Kernels that moved', 'Device activity by name (every activity, as HTA\'s trace diff counts it).',
                kernels.length ? R.diverging('moved-kernels', 'Kernels: B - A', '(the 20 of largest impact)', moved(kernels, (r) => r.name, (r) => [r.total_ns_a, r.total_ns_b]), R.fmtNs)
                               : el('p', {class: 'muted'}, 'No kernel differs.'),
                R.rowsTable('diff_kernels', kernels, {first: ['name', 'change', 'impact_ns']})),
    ];
  }

  function flattenSides(rows, keyFields) {
    return rows.map((r) => {
      const flat = {};
      for (const k of keyFields) flat[k] = r[k];
      for (const side of ['a', 'b']) for (const [k, v] of Object.entries(r[side] || {})) flat[`${k}_${side}`] = v;
      return flat;
    });
  }

  function jobDiffSections(diff, names) {
    const ranks = flattenSides(diff.ranks || [], ['rank']);
    const summary = flattenSides(diff.collective_summary || [], ['name', 'bytes']);
    return [
      R.section('moved-ranks', 'Ranks that moved', names ? `${names[0]} (A) -> ${names[1]} (B)` : null,
                R.diverging('moved-ranks', 'Busy time per rank: B - A', null,
                            ranks.map((r) => ({label: 'rank ' + r.rank, a: r.busy_us_a || 0, b: r.busy_us_b || 0})), R.fmtUs),
                R.rowsTable('diff_ranks', ranks, {first: ['rank']})),
      R.section('moved-collectives', 'Collectives that moved', 'By name and size: total transfer time (count x mean).',
                summary.length ? R.diverging('moved-collectives', 'Transfer time: B - A', null,
                                             summary.map((s) => ({label: `${s.name} ${R.fmtBytes(s.bytes)}`, a: (s.count_a || 0) * (s.mean_transfer_us_a || 0),
                                                                  b: (s.count_b || 0) * (s.mean_transfer_us_b || 0)})), R.fmtUs)
                               : el('p', {class: 'muted'}, 'No collective in either job.'),
                R.rowsTable('diff_collective_summary', summary, {first: ['name', 'bytes']}),
                R.rowsTable('diff_collectives', diff.collectives || [], {first: ['group', 'seq', 'name']})),
    ];
  }

  R.diffSections = function (doc) {
    const names = [doc.a, doc.b];
    return doc.kind === 'job_diff' ? jobDiffSections(doc.diff, names) : traceDiffSections(doc.diff, names);
  };

  R.checkSections = function (doc) {
    const c = doc.check;
    const banner = el('div', {class: 'verdict verdict-' + c.verdict, 'data-verdict': c.verdict}, c.headline);
    const out = [R.section('verdict', 'Verdict', null, banner,
                           R.kv({baseline: c.baseline, candidate: c.candidate, steps_baseline: c.steps_baseline, steps_candidate: c.steps_candidate,
                                 max_regression_pct: c.max_regression_pct, alpha: c.alpha, noise_estimate: c.noise_estimate}),
                           (c.notes || []).length ? el('ul', {}, ...c.notes.map((n) => el('li', {}, n))) : null)];
    if (c.verdict === 'error') return out;
    const metrics = c.metrics || [];
    const charts = [];
    // Per-step figures of each metric that decided something or leads the list (step, device).
    metrics.filter((m, i) => i < 2 || m.outcome !== 'pass').slice(0, 6).forEach((m, i) => {
      if (m.baseline_ns.length < 2 && m.candidate_ns.length < 2) return;
      const series = [{label: 'baseline', color: R.colors.baseline, points: true, xs: m.baseline_ns.map((_, k) => k), ys: m.baseline_ns,
                       tips: m.baseline_ns.map((v, k) => `baseline step ${k}: ${R.fmtNs(v)}`)},
                      {label: 'candidate', color: R.colors.candidate, points: true, xs: m.candidate_ns.map((_, k) => k), ys: m.candidate_ns,
                       tips: m.candidate_ns.map((v, k) => `candidate step ${k}: ${R.fmtNs(v)}`)}];
      charts.push(R.xy('steps-' + i, `${m.metric} per step`, `(${m.outcome}; ${R.fmtSignedPct(m.change_pct)} in median${m.tested ? `, p = ${m.p_value.toFixed(4)}` : ''})`,
                       {x: {label: 'step (after skipped ones)', integer: true, fmt: (v) => String(Math.round(v))}, y: {label: 'time', fmt: R.fmtNs}, height: 240,
                        series: R.alignSeries(series)}));
    });
    const rows = metrics.map((m) => Object.assign({}, m, {p_value: m.tested ? m.p_value : null}));
    out.push(R.section('metrics', 'Metrics', 'Medians of the per-step figures; a regression rises beyond the limit and, with steps to test, is significant (one-sided Mann-Whitney U).',
                       R.table('metrics', [
                         {key: 'metric', label: 'metric'}, {key: 'outcome', label: 'outcome'},
                         {key: 'baseline_median_ns', label: 'baseline_median_ns', num: true, fmt: R.fmtNs},
                         {key: 'candidate_median_ns', label: 'candidate_median_ns', num: true, fmt: R.fmtNs},
                         {key: 'change_pct', label: 'change_pct', num: true, fmt: R.fmtSignedPct},
                         {key: 'p_value', label: 'p_value', num: true, fmt: (v) => (v === null ? '-' : v.toFixed(4))},
                         {key: 'note', label: 'note'}], rows, {limit: -1}), ...charts));
    const moved = c.moved || [];
    out.push(R.section('moved', 'What moved', 'The diff\'s rows by impact.',
                       moved.length ? R.diverging('moved', 'Moved most: candidate - baseline', null,
                                                  moved.map((r) => ({label: `${r.kind}: ${r.name}`, a: r.baseline_ns, b: r.candidate_ns})), R.fmtNs)
                                    : el('p', {class: 'muted'}, 'Nothing moved.'),
                       R.rowsTable('moved', moved, {first: ['kind', 'name', 'change']})));
    if (c.diff) out.push(...(c.diff.ranks ? jobDiffSections(c.diff, null) : traceDiffSections(c.diff, null)));
    return out;
  };
})(window.OpscopeReport = window.OpscopeReport || {});
