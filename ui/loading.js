// The server's loading progress (/api/status) while `opscope explore` imports and indexes its
// traces: one row per trace with its phase, a bar of bytes read and the import speed; a trace
// that could not be opened says why (file and byte offset). The page opens once every trace is
// served or failed, without a reload.
import {getJson} from './api.js';
import {el} from './format.js';

// Often enough that the page opens within a frame or three of the server being ready; an answer
// is a few hundred bytes per trace.
const POLL_MS = 50;

const MB = 1e6;
const mb = (bytes) => (bytes / MB).toFixed(bytes < 10 * MB ? 1 : 0);

function describe(t) {
  if (t.phase === 'failed') return `could not be opened: ${t.error}`;
  if (t.phase === 'queued') return 'waiting for an import thread';
  const size = t.bytes_total ? `${mb(t.bytes_read)} / ${mb(t.bytes_total)} MB` : `${mb(t.bytes_read)} MB`;
  const speed = t.mb_per_s > 0 ? ` · ${t.mb_per_s.toFixed(0)} MB/s` : '';
  if (t.phase === 'importing') return `importing ${size}${speed} · ${t.seconds.toFixed(1)} s`;
  if (t.phase === 'indexing') return `indexing (imported ${size} in ${(t.import_seconds || 0).toFixed(1)} s)`;
  return `ready in ${t.seconds.toFixed(1)} s`;
}

// Draws the status into `panel` (one row per trace, kept by index).
function render(panel, status) {
  panel.hidden = false;
  const list = panel.querySelector('.loading-traces') ||
      panel.appendChild(el('div', {class: 'loading-traces'}));
  status.traces.forEach((t, i) => {
    let row = list.children[i];
    if (!row) {
      row = el('div', {class: 'loading-trace'}, el('span', {class: 'loading-name'}, t.name),
               el('span', {class: 'loading-bar'}, el('span', {class: 'loading-fill'})),
               el('span', {class: 'loading-text'}));
      list.append(row);
    }
    const done = t.phase === 'ready' || t.phase === 'indexing' ? 1 : t.fraction;
    row.dataset.phase = t.phase;
    row.querySelector('.loading-fill').style.width = `${(100 * done).toFixed(1)}%`;
    row.querySelector('.loading-text').textContent = describe(t);
  });
}

// Polls /api/status into `panel` every `pollMs` until no trace is still loading (and with `job`,
// until the job's view is made or known not to be one); returns the last status. `until` (a
// promise: what the page waits for, asked for meanwhile) makes it poll once more as soon as it
// settles. The panel stays up only when a trace failed (its error stays readable).
export async function waitUntilLoaded(panel, {job = false, pollMs = POLL_MS, until = null} = {}) {
  const done = (s) => s.ready && !(job && s.job === 'loading');
  let woken = false;
  const wake = until && until.then(() => (woken = true), () => (woken = true));
  let status = await getJson('/api/status');
  if (!done(status)) document.body.dataset.loading = '1';
  while (!done(status)) {
    render(panel, status);
    const sleep = new Promise((resolve) => setTimeout(resolve, pollMs));
    await (wake && !woken ? Promise.race([sleep, wake]) : sleep);
    status = await getJson('/api/status');
  }
  delete document.body.dataset.loading;
  const failed = status.traces.filter((t) => t.phase === 'failed');
  if (failed.length) render(panel, {traces: failed});
  else panel.hidden = true;
  return status;
}
