// The job page: every rank's trace on one aligned time axis (/api/job: the reference rank's clock
// after clock alignment) in the trace view's timeline (job_timeline.js), a lane group per rank
// (device streams shown, host lanes on request), every collective's skew marked above the ranks,
// the selected collective drawn on every rank; the tables below (job_tables.js). The URL keeps
// the view: coll (the selected collective, GROUP:SEQ), t0/t1 (axis ns), y, host. Keys as in the
// trace view wherever focus is not in a text field. Traces that are not one job (the server says
// so with a 404) open in the trace view instead.
import {api, getJson} from './api.js';
import {waitUntilLoaded} from './loading.js';
import {fmtNs} from './format.js';
import {installKeys, renderHelp} from './keys.js';
import {JobTimeline, expandMembers, keyOf} from './job_timeline.js';
import {collectiveFilter, renderCollectiveSummary, renderCollectives, renderSelected, renderSummary, fmtBytes} from './job_tables.js';

const $ = (id) => document.getElementById(id);
const S = {job: null, tl: null, sel: null, table: null, hashTimer: null, firstPaintMs: null};

const JOB_SHORTCUTS = [
  ['?', 'show or hide this help'],
  ['W / S, wheel', 'zoom in / out (at the cursor with the wheel)'],
  ['A / D, ← / →, drag', 'pan in time'],
  ['↑ / ↓, PgUp / PgDn', 'scroll the ranks (also the wheel over the labels, shift+wheel, the scrollbar)'],
  ['F', 'focus: zoom to the selected collective'],
  ['0', 'show the whole job'],
  ['/', 'go to the collectives filter'],
  ['click', 'a kernel of a collective, or its skew mark: select the collective on every rank; a rank header: fold it'],
  ['Esc', 'close this help; clear the selection'],
];

function writeHash() {
  clearTimeout(S.hashTimer);
  S.hashTimer = setTimeout(() => {
    const p = new URLSearchParams();
    if (S.sel) p.set('coll', keyOf(S.sel));
    p.set('t0', String(Math.floor(S.tl.t0)));
    p.set('t1', String(Math.ceil(S.tl.t1)));
    if (S.tl.scrollY) p.set('y', String(Math.round(S.tl.scrollY)));
    if ($('job-host').checked) p.set('host', '1');
    history.replaceState(null, '', `#${p.toString()}`);
  }, 100);
}

// The range a collective is shown in: its members with a margin.
function rangeOf(c) {
  const first = Math.min(...c.members.map((m) => m[4]));
  const end = Math.max(...c.members.map((m) => m[5]));
  const pad = Math.max(end - first, 2000) * 0.6;
  return {t0: first - pad, t1: end + pad, pad};
}

// Selects a collective instance (null clears): drawn on every rank, listed below; zooms to it
// unless `zoom` is false.
function select(c, {zoom = true} = {}) {
  S.sel = c;
  S.tl.collective = c;
  markRow();
  renderSelected(S.job, c, c ? rangeOf(c).pad : 0);
  if (c && zoom) {
    const r = rangeOf(c);
    S.tl.setView(r.t0, r.t1);
  } else {
    S.tl.draw();
  }
  $('job-status').textContent = c ? `${c.name} ${c.group}#${c.seq} selected: skew ${fmtNs(c.skew_ns)}` : status();
  writeHash();
}

// The selected collective's row in the instances table (when it is listed).
function markRow() {
  if (!S.table) return;
  for (const tr of S.table.querySelectorAll('tbody tr.active')) tr.classList.remove('active');
  const tr = S.sel ? S.table.querySelector(`tbody tr[data-key="${CSS.escape(keyOf(S.sel))}"]`) : null;
  if (tr) tr.classList.add('active');
}

function selectByKey(key, opts) {
  const c = S.job.collectives.find((x) => keyOf(x) === key);
  if (c) select(c, opts);
  return !!c;
}

function status() {
  return `${S.job.ranks.length} ranks · ${fmtNs(S.tl.t1 - S.tl.t0)} shown`;
}

// A click on the lanes: a member kernel or a skew mark selects its collective; another event
// says what it is.
function onClick(id, hit) {
  const c = S.tl.collectiveAt(hit);
  if (c) return select(c, {zoom: false});
  if (!hit) return select(null);
  const r = S.tl.rankOfLane(hit.lane);
  $('job-status').textContent = r ? `rank ${r.rank}: ${hit.name} (${fmtNs(hit.item[1])}) is not part of a collective` : '';
}

function countCollectives() {
  const shown = S.table.querySelectorAll('tbody tr:not(.more-rows)').length;
  const matching = Number(S.table.dataset.rows);
  $('job-coll-count').textContent = `${matching} of ${S.job.collectives.length} instances` +
      (shown < matching ? ` (${shown} listed: sort or filter, or show all)` : '');
}

function filterCollectives() {
  const f = collectiveFilter($('job-coll-filter').value);
  S.table.refill(f ? (r) => f(r) : null);
  countCollectives();
}

function toggleHelp(show) {
  const box = $('help');
  box.hidden = show === undefined ? !box.hidden : !show;
  if (!box.hidden) {
    renderHelp(box, () => toggleHelp(false), JOB_SHORTCUTS,
               'Each rank is a lane group on the reference rank’s clock; the top lane marks every collective’s skew, ' +
               'darker as it is larger. The URL keeps the view and the selected collective.');
  }
}

function wireKeys() {
  const tl = S.tl;
  installKeys({
    timeline: () => tl,
    help: () => toggleHelp(),
    escape: () => (!$('help').hidden ? toggleHelp(false) : select(null)),
    focus: () => {
      if (S.sel) select(S.sel);
      else $('job-status').textContent = 'F: select a collective first';
    },
    mark: () => {
      if (!S.sel) return;
      const starts = S.sel.members.map((m) => m[4]);
      tl.markRange = tl.markRange ? null : {t0: Math.min(...starts), t1: Math.max(...starts)};
      tl.draw();
    },
    whole: () => tl.setView(-S.job.t1 * 0.01, S.job.t1 * 1.01),
    search: () => $('job-coll-filter').focus(),
  });
  $('help-button').addEventListener('click', () => toggleHelp());
}

// The view from the URL: the collective, the range, the scroll and the host lanes.
function applyHash() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ''));
  if (p.get('host') === '1') {
    $('job-host').checked = true;
    S.tl.setHost(true);
  }
  const t0 = Number(p.get('t0'));
  const t1 = Number(p.get('t1'));
  const range = p.has('t0') && p.has('t1') && Number.isFinite(t0) && Number.isFinite(t1) && t1 > t0;
  if (p.has('coll')) selectByKey(p.get('coll'), {zoom: !range});
  if (range) S.tl.setView(t0, t1);
  if (p.has('y')) {
    S.tl.scrollY = Number(p.get('y')) || 0;
    S.tl.clampScroll();
  }
}

// /api/job, or null when these traces are not one job (404: then the trace view opens).
async function loadJob() {
  try {
    return expandMembers(await getJson('/api/job', {compact: 1}));
  } catch (e) {
    if (/not opened as one job/.test(e.message)) return null;
    throw e;
  }
}

// The job as soon as the server has made it: asked for at once (wait=1: the server answers when
// it is made) while the loading panel polls the progress, less often than the trace view's (the
// answer does not wait for a poll, and the cores are the import's) and once more when the answer
// comes (then every trace is served: the panel closes); whichever comes first opens the page.
// Null when not one job.
const STATUS_POLL_MS = 250;

async function firstJob() {
  const early = getJson('/api/job', {wait: 1, compact: 1}).then(expandMembers).catch(() => null);
  const polled = waitUntilLoaded($('loading'), {job: true, pollMs: STATUS_POLL_MS, until: early});
  polled.catch(() => {});  // reported below when it matters (no early answer)
  const job = await Promise.race([early, polled.then(() => early)]);
  return job || polled.then(loadJob);
}

async function main() {
  const job = await firstJob();
  if (!job) {
    location.replace('/#notjob=1');
    return;
  }
  S.job = job;
  $('job-meta').textContent = `${job.ranks.length} of ${job.world_size} ranks · ${job.collectives.length} collectives` +
      (job.partial ? ' · partial: some rank files could not be read' : '');
  if (job.ranks.length) $('job-traces').href = `/#trace=${job.ranks[0].trace}`;
  const straggler = job.stragglers.find((s) => s.wait_caused_us > 0);
  S.tl = new JobTimeline($('job-timeline'), {
    api, job, straggler: straggler ? straggler.rank : null, tooltip: $('job-tooltip'),
    onSelect: onClick, onView: () => {
      if (!S.sel) $('job-status').textContent = status();
      writeHash();
    },
    onLayout: writeHash,
  });
  S.tl.offset = 0;
  S.tl.extent = {t0: 0, t1: job.t1};
  S.tl.setView(-job.t1 * 0.01, job.t1 * 1.01, {silent: true});
  applyHash();
  S.tl.fetchNow();  // the ranks' viewports load while the tables below are laid out
  $('job-host').addEventListener('change', () => {
    S.tl.setHost($('job-host').checked);
    writeHash();
  });
  renderSummary(job, {selectByKey, setView: (a, b) => S.tl.setView(a, b)});
  renderCollectiveSummary(job, (row) => {
    $('job-coll-filter').value = `${row.name} ${fmtBytes(row.bytes)}`;
    filterCollectives();
  });
  S.table = renderCollectives(job, {select: (c) => select(c), isSelected: (c) => !!S.sel && keyOf(c) === keyOf(S.sel)});
  S.table.addEventListener('click', () => setTimeout(countCollectives));  // sorting, "show all"
  $('job-coll-filter').addEventListener('input', filterCollectives);
  markRow();
  countCollectives();
  wireKeys();
  await S.tl.firstPaint;
  S.firstPaintMs = performance.now();
  $('job-status').textContent = S.sel ? $('job-status').textContent : status();
  window.opscopeJob = {
    state: S, timeline: () => S.tl, select, selectByKey, setRange: (a, b) => S.tl.setView(a, b),
    get fetches() {
      return S.tl.fetches;
    },
    loading: () => S.tl.loading(),
  };
  document.body.dataset.ready = '1';
}

main().catch((e) => {
  $('job-status').textContent = `failed to load the job: ${e.message}`;
  document.body.dataset.ready = 'error';
});
