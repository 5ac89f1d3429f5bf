// The Explorer's JSON API. The access token (if any) travels as a cookie set by the server. A
// request naming a trace the server is still loading (503, "loading": true) is retried.

export async function getJson(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const url = path + (q.toString() ? '?' + q.toString() : '');
  for (;;) {
    const res = await fetch(url, {credentials: 'same-origin'});
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      throw new Error(`${url}: HTTP ${res.status}`);
    }
    // A trace still loading: asked again when the server says (Retry-After), until it is served.
    if (res.status === 503 && body && body.loading) {
      const seconds = Number(res.headers.get('Retry-After')) || 1;
      await new Promise((resolve) => setTimeout(resolve, Math.min(seconds, 5) * 1000));
      continue;
    }
    if (!res.ok) throw new Error(body && body.error ? body.error : `${url}: HTTP ${res.status}`);
    return body;
  }
}

export const api = {
  info: () => getJson('/api/info'),
  status: () => getJson('/api/status'),
  lanes: (t) => getJson(`/api/trace/${t}/lanes`),
  viewport: (t, p) => getJson(`/api/trace/${t}/viewport`, p),
  slice: (t, id) => getJson(`/api/trace/${t}/slice/${id}`),
  chain: (t, id) => getJson(`/api/trace/${t}/chain/${id}`),
  device: (t, id) => getJson(`/api/trace/${t}/device/${id}`),
  ops: (t, p) => getJson(`/api/trace/${t}/ops`, p),
  select: (t, p) => getJson(`/api/trace/${t}/select`, p),
  search: (t, p) => getJson(`/api/trace/${t}/search`, p),
  marks: (t, p) => getJson(`/api/trace/${t}/marks`, p),
  summary: (t) => getJson(`/api/trace/${t}/summary`),
  criticalPath: (t, p) => getJson(`/api/trace/${t}/critical_path`, p),
  diff: (a, b) => getJson('/api/diff', {a, b}),
  job: () => getJson('/api/job'),
  jobViewport: (p) => getJson('/api/job/viewport', p),
};
