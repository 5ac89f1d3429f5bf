// Navigation on a real trace: lanes and groups, pinning, deep stacks, jumping to events, search,
// keyboard, and the URL state.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {T, api, openPage, shot, drawn, canvasBox} from './harness.mjs';

// Client coordinates of a timeline control (a group header, a lane's pin or rows toggle).
async function controlAt(page, match) {
  return page.evaluate((m) => {
    const tl = window.opscopeApp.timeline();
    const c = tl.controls.find((x) => Object.entries(m).every(([k, v]) => x[k] === v));
    if (!c) return null;
    const b = tl.canvas.getBoundingClientRect();
    return {x: b.left + c.x + Math.min(c.w / 2, 40), y: b.top + c.y + c.h / 2, cy: c.y};
  }, match);
}

async function lanesOf(trace) {
  const lanes = await api(`/api/trace/${trace}/lanes`);
  const all = [];
  for (const g of lanes.groups) for (const l of g.lanes) all.push({...l, group: g.key});
  return all;
}

test('a real trace opens with its device streams on screen and deep Python stacks folded', async () => {
  const lanes = await lanesOf(T.deep);
  const titles = lanes.map((l) => l.title);
  assert.equal(new Set(titles).size, titles.length, `lane titles are unique: ${titles}`);
  for (const t of titles) assert.doesNotMatch(t, /^pid \d+ · thread \d+$/, 'lanes are named by what the trace calls them');
  const python = lanes.filter((l) => l.role === 'python');
  assert.ok(python.length > 0 && python.every((l) => l.group === 'framework'), 'Python stacks are host lanes');
  const deep = python.reduce((a, b) => (a.rows > b.rows ? a : b));
  assert.ok(deep.rows >= 20, `a deep Python stack (${deep.rows} rows)`);
  const stream = lanes.find((l) => l.group === 'hardware');

  const page = await openPage(`trace=${T.deep}&tab=details`);
  await drawn(page);
  const box = await canvasBox(page);
  const seen = await page.evaluate(([p, s]) => {
    const tl = window.opscopeApp.timeline();
    return {shown: tl.layout.lanes.get(p).shown, streamY: tl.rowY(s, 0), height: tl.height};
  }, [deep.id, stream.id]);
  assert.equal(seen.shown, 3, 'the Python stack shows 3 rows until expanded');
  assert.ok(seen.streamY !== null && seen.streamY + 16 <= seen.height, `device stream on screen at first paint: ${JSON.stringify(seen)}`);
  await shot(page, 'real-trace-first-paint');

  // Expand the stack: the device stream moves down; scrolling keeps labels and headers visible.
  const more = await controlAt(page, {action: 'rows', lane: deep.id});
  await page.mouse.click(more.x, more.y);
  assert.equal(await page.evaluate((p) => window.opscopeApp.timeline().layout.lanes.get(p).shown, deep.id), deep.rows);
  await page.mouse.move(box.x + 60, box.y + 200);
  await page.mouse.wheel(0, 220);
  await page.waitForFunction(() => window.opscopeApp.timeline().scrollY > 0);
  const sticky = await page.evaluate((p) => {
    const tl = window.opscopeApp.timeline();
    const header = tl.controls.find((c) => c.action === 'group' && c.path === 'framework');
    const pin = tl.controls.find((c) => c.action === 'pin' && c.lane === p);
    return {top: tl.scrollTop(), header: header && header.y, label: pin && pin.y, laneY: tl.rowY(p, 0)};
  }, deep.id);
  assert.equal(sticky.header, sticky.top, `the group header sticks to the top: ${JSON.stringify(sticky)}`);
  assert.ok(sticky.laneY < sticky.top && sticky.label >= sticky.top, `the lane label stays on screen: ${JSON.stringify(sticky)}`);
  await shot(page, 'real-trace-sticky-labels');

  // Pin the device stream: it is drawn at the top whatever the scroll.
  await page.evaluate(() => window.opscopeApp.timeline().scrollTo(1e6));
  const pin = await controlAt(page, {action: 'pin', lane: stream.id});
  assert.ok(pin, 'the stream lane has a pin control');
  await page.mouse.move(pin.x, pin.y);
  await page.mouse.click(pin.x, pin.y);
  await page.evaluate(() => window.opscopeApp.timeline().scrollTo(150));
  const pinned = await page.evaluate((s) => ({y: window.opscopeApp.timeline().rowY(s, 0), pinned: window.opscopeApp.timeline().layout.pinned}), stream.id);
  assert.deepEqual(pinned.pinned, [stream.id]);
  assert.equal(pinned.y, 22, 'a pinned lane sits under the axis');
  // Fold a group from its header.
  await page.evaluate(() => window.opscopeApp.timeline().scrollTo(1e6));
  const header = await controlAt(page, {action: 'group', path: 'runtime'});
  await page.mouse.click(header.x, header.y);
  assert.ok(await page.evaluate(() => window.opscopeApp.timeline().layout.collapsed.has('runtime')));
  await page.waitForTimeout(250);
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, new RegExp(`pinned=${stream.id}`));
  assert.match(hash, /collapsed=runtime/);
  assert.match(hash, /y=\d+/);
  assert.match(hash, new RegExp(`rows=${deep.id}`));
  await shot(page, 'real-trace-pinned-folded');
  // The URL restores all of it.
  const again = await openPage(hash.slice(1));
  const restored = await again.evaluate(() => {
    const tl = window.opscopeApp.timeline();
    return {pinned: tl.layout.pinned, collapsed: [...tl.layout.collapsed], y: tl.scrollY, rows: [...tl.layout.expanded]};
  });
  assert.deepEqual(restored.pinned, [stream.id]);
  assert.deepEqual(restored.collapsed, ['runtime']);
  assert.deepEqual(restored.rows, [deep.id]);
  assert.ok(restored.y > 0);
  assert.deepEqual(page.errors, []);
  await again.close();
  await page.close();
});

test('a regex search steps with Enter / Shift+Enter, marks every match and scrolls to it', async () => {
  const lanes = await lanesOf(T.deep);
  const deep = lanes.filter((l) => l.role === 'python').reduce((a, b) => (a.rows > b.rows ? a : b));
  // Every Python row open: the device stream starts below the visible lanes.
  const page = await openPage(`trace=${T.deep}&tab=details&rows=${deep.id}`);
  await drawn(page);
  const q = '^Cijk_';
  const total = (await api(`/api/trace/${T.deep}/search?regex=1&q=${encodeURIComponent(q)}&limit=1`)).total;
  assert.ok(total > 10, 'the trace has GEMM kernels');
  await page.click('#search-regex');  // a regular expression, not text
  await page.fill('#search', q);
  await page.press('#search', 'Enter');
  await page.waitForFunction(() => /^1 \/ /.test(document.getElementById('search-count').textContent));
  assert.equal(await page.$eval('#search-count', (e) => e.textContent), `1 / ${total}`);
  const onScreen = async () => page.evaluate(() => {
    const tl = window.opscopeApp.timeline();
    const s = window.opscopeApp.state.slice;
    const y = s && tl.rowY(s.lane, s.row);
    return {name: s && s.name, y, top: tl.scrollTop(), height: tl.height, x: s && tl.xOf(s.ts)};
  });
  await page.waitForFunction(() => window.opscopeApp.state.slice !== null);
  let at = await onScreen();
  assert.match(at.name, /^Cijk_/);
  assert.ok(at.y >= at.top && at.y + 16 <= at.height, `the match's row is scrolled into view: ${JSON.stringify(at)}`);
  await page.press('#search', 'Enter');
  await page.waitForFunction(() => /^2 \//.test(document.getElementById('search-count').textContent));
  await page.press('#search', 'Shift+Enter');
  await page.waitForFunction(() => /^1 \//.test(document.getElementById('search-count').textContent));
  await page.press('#search', 'Shift+Enter');
  await page.waitForFunction((n) => document.getElementById('search-count').textContent === `${n} / ${n}`, total);
  // The count changes before the selected slice is fetched and scrolled to: wait (bounded) for the
  // selection to settle in view, then assert, so a scroll that never comes still fails.
  await page.waitForFunction(() => {
    const tl = window.opscopeApp.timeline();
    const s = window.opscopeApp.state.slice;
    const y = s && tl.rowY(s.lane, s.row);
    return s && y >= tl.scrollTop() && y + 16 <= tl.height;
  }, null, {timeout: 5000}).catch(() => {});
  at = await onScreen();
  assert.ok(at.y >= at.top && at.y + 16 <= at.height, 'the last match is in view too');
  // Results list lane and time; every match in view is marked on the timeline.
  const row = await page.$eval('#search-results tr.current', (tr) => [...tr.children].map((td) => td.textContent));
  assert.equal(row[0], String(total));
  assert.match(row[2], /GPU \d+ · stream/);
  assert.match(row[3], /\d+\.\d+ (ms|us)/);
  await page.evaluate(() => window.opscopeApp.timeline().key('s'));
  await page.waitForFunction(() => window.opscopeApp.timeline().marks && window.opscopeApp.timeline().marks.size > 0);
  await shot(page, 'search-matches');
  assert.deepEqual(page.errors, []);
  await page.close();
});

// Whether the selected event (or the first drawn event named `name`) is on screen: its row inside
// the scrolled area and its start inside the time axis.
async function inView(page, name) {
  return page.evaluate((n) => {
    const tl = window.opscopeApp.timeline();
    const s = n ? tl.rects.find((r) => r.name === n) : window.opscopeApp.state.slice;
    if (!s) return {ok: false, why: 'not drawn'};
    const y = n ? s.y : tl.rowY(s.lane, s.row);
    const x = n ? s.x : tl.xOf(s.ts);
    const ok = y !== null && y >= tl.scrollTop() && y + 16 <= tl.height && x >= 0 && x <= tl.width;
    return {ok, y, x, top: tl.scrollTop(), height: tl.height, width: tl.width};
  }, name);
}

test('jumping from the URL, a chain link and the op table scrolls the event into view', async () => {
  const lanes = await lanesOf(T.deep);
  const deep = lanes.filter((l) => l.role === 'python').reduce((a, b) => (a.rows > b.rows ? a : b));
  const kernel = (await api(`/api/trace/${T.deep}/search?regex=1&q=${encodeURIComponent('^Cijk_')}&limit=50`)).events[40];
  const mm = (await api(`/api/trace/${T.deep}/search?regex=1&q=${encodeURIComponent('^aten::mm$')}&limit=50`)).events[40];
  // A link naming only the event (no t0/t1 or y), with every Python row open above the streams.
  const page = await openPage(`trace=${T.deep}&tab=details&rows=${deep.id}&sel=${mm.id}`);
  await page.waitForFunction((id) => (window.opscopeApp.state.slice || {}).id === id, mm.id);
  await drawn(page);
  let at = await inView(page);
  assert.ok(at.ok, `the URL's event is in view: ${JSON.stringify(at)}`);
  // Its chain: the kernel it launched, on the GPU stream below every Python row.
  await page.waitForSelector('#chain [data-level="hardware"] .event-link');
  const link = await page.$eval('#chain [data-level="hardware"] .event-link', (e) => Number(e.dataset.id));
  await page.evaluate(() => window.opscopeApp.timeline().scrollTo(0));
  await page.click(`#chain .event-link[data-id="${link}"]`);
  await page.waitForFunction((id) => (window.opscopeApp.state.slice || {}).id === id, link);
  at = await inView(page);
  assert.ok(at.ok, `the chain link's kernel is in view: ${JSON.stringify(at)}`);
  assert.ok(at.y > 200, `... below the Python rows: ${JSON.stringify(at)}`);
  await shot(page, 'chain-jump');
  await page.close();

  // The op table: a kernel row brings its first event into view when none is on screen.
  const ops = await openPage(`trace=${T.deep}&tab=ops&rows=${deep.id}`);
  await drawn(ops);
  await ops.waitForSelector('#op-table tbody tr');
  const kname = kernel.name;
  assert.equal((await inView(ops, kname)).ok, false, 'the kernel starts off screen');
  await ops.click(`#op-table tbody tr[data-name="${kname}"]`);
  await ops.waitForFunction((n) => window.opscopeApp.timeline().rects.some((r) => r.name === n), kname, {timeout: 10000});
  at = await inView(ops, kname);
  assert.ok(at.ok, `the op table's kernel is in view: ${JSON.stringify(at)}`);
  await shot(ops, 'op-table-jump');
  assert.deepEqual([...page.errors, ...ops.errors], []);
  await ops.close();
});

test('keyboard: help, focus, mark, pan and a zoom-out bound; grid and legend', async () => {
  const page = await openPage(`trace=${T.neuron}&tab=details`);
  await drawn(page);
  const box = await canvasBox(page);
  await page.mouse.move(box.x + 700, box.y + 200);
  await page.keyboard.press('?');
  await page.waitForSelector('#help .help-card');
  assert.match(await page.$eval('#help', (e) => e.textContent), /mark the selection/);
  await shot(page, 'help-overlay');
  await page.keyboard.press('Escape');
  assert.equal(await page.$eval('#help', (e) => e.hidden), true);
  // Zooming out stops near the trace's extent.
  for (let i = 0; i < 25; i++) await page.keyboard.press('s');
  const bound = await page.evaluate(() => {
    const tl = window.opscopeApp.timeline();
    return {span: tl.t1 - tl.t0, extent: tl.extent.t1 - tl.extent.t0};
  });
  assert.ok(bound.span <= bound.extent * 1.1 + 1, `zoom-out bound: ${JSON.stringify(bound)}`);
  // Select an event, F focuses it, M marks its range.
  const mul = (await api(`/api/trace/${T.neuron}/search?regex=1&q=${encodeURIComponent('^aten::mul$')}&limit=3`)).events[2];
  await page.evaluate((id) => window.opscopeApp.select(id), mul.id);
  await page.waitForFunction(() => window.opscopeApp.state.slice !== null);
  await page.keyboard.press('f');
  const view = await page.evaluate(() => [window.opscopeApp.timeline().t0, window.opscopeApp.timeline().t1]);
  assert.ok(view[0] <= mul.ts && view[1] >= mul.ts + mul.dur && view[1] - view[0] < mul.dur * 10, `F zooms to the event: ${view}`);
  await page.keyboard.press('m');
  const mark = await page.evaluate(() => window.opscopeApp.timeline().markRange);
  assert.deepEqual(mark, {t0: mul.ts, t1: mul.ts + mul.dur});
  assert.match(await page.$eval('#status', (e) => e.textContent), /marked \d/);
  const t0 = await page.evaluate(() => window.opscopeApp.timeline().t0);
  await page.keyboard.press('ArrowRight');
  assert.ok(await page.evaluate((a) => window.opscopeApp.timeline().t0 > a, t0), 'the right arrow pans');
  await page.waitForTimeout(250);
  assert.match(await page.evaluate(() => location.hash), /mark=\d+%2C\d+/);
  // A time grid with units and a colour legend.
  assert.ok(await page.$$eval('#legend .legend-entries .legend-item', (e) => e.length) > 0, 'colour legend entries');
  await page.selectOption('#color-by', 'kind');
  await page.waitForFunction(() => [...document.querySelectorAll('#legend .legend-entries .legend-item')].some((e) => e.textContent === 'cpu op'));
  await shot(page, 'keys-focus-mark');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the URL state: hashchange applies edits, invalid values say so', async () => {
  const page = await openPage(`trace=${T.neuron}&tab=details`);
  await drawn(page);
  await page.evaluate((c) => {
    location.hash = `#trace=${c}&tab=ops&sort=count:asc&opf=aten`;
  }, T.cuda);
  await page.waitForFunction((c) => window.opscopeApp.state.trace === c && window.opscopeApp.state.tab === 'ops', T.cuda);
  await page.waitForSelector('#op-table tbody tr');
  assert.equal(await page.$eval('#op-table th[data-key="count"]', (e) => e.getAttribute('aria-sort')), 'ascending');
  const names = await page.$$eval('#op-table tbody tr', (rows) => rows.map((r) => r.dataset.name));
  assert.ok(names.length > 0 && names.every((n) => /aten/i.test(n)), 'the filter from the URL applies');
  assert.equal(await page.$eval('#ops-filter', (e) => e.value), 'aten');
  await page.evaluate(() => {
    location.hash = '#trace=99&tab=nope&sel=x&box=5,1&collapsed=nosuchgroup';
  });
  await page.waitForSelector('#message:not([hidden])');
  const text = await page.$eval('#message', (e) => e.textContent);
  for (const bad of ['trace=99', 'tab=nope', 'sel=x', 'box=5,1', 'collapsed=nosuchgroup']) assert.ok(text.includes(bad), `${bad} in: ${text}`);
  await shot(page, 'url-invalid-values');
  // A selection that does not exist in the trace.
  await page.evaluate(() => {
    location.hash = '#sel=99999999&tab=details';
  });
  await page.waitForFunction(() => document.getElementById('message').textContent.includes('sel=99999999'));
  assert.deepEqual(page.errors.filter((e) => !/400/.test(e)), []);
  await page.close();
});
