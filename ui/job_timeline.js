// The job's timeline: the trace view's Timeline (lanes.js layout, timeline_draw.js renderer, its
// mouse and keys) over every rank at once. Each rank is a lane group; its lanes keep their ids
// in the rank's trace, made unique as rankIndex x LANE_STRIDE + id (the server's job lane ids).
// The axis is /api/job's: the reference rank's clock in ns from the job's origin. Every rank's
// events come in one answer (/api/job/viewport), mapped onto the axis by the server exactly as it
// maps the collectives, in integer ns: a collective's outline lands on its kernel at any zoom. A
// lane on top marks every collective's skew (first to last arrival, at least a pixel wide, so it
// shows at every zoom), coloured by how large it is; the selected collective is drawn over the
// lanes (overlay).
import {Timeline} from './timeline.js';
import {ROW_H, AXIS_H} from './lanes.js';
import {LABEL_W, withStride} from './timeline_draw.js';
import {fmtNs} from './format.js';

export const LANE_STRIDE = 1 << 20;  // lane ids per rank: a trace has at most 100,000 lanes
export const SKEW_LANE = -1;
// How long a change of view waits for its answer before drawing the data it has at the new view
// (about two frames: a prompt answer is then the only draw).
const STALE_DRAW_MS = 35;
// How long the page's first draw waits for the first answer before it draws the lanes alone.
const FIRST_DRAW_MS = 400;

export const toTs = (r, a) => r.start_ns + (a - r.axis_at_start_ns) / r.scale;

// The page reads /api/job with compact=1: each collective's members as "first_ns" and "m", one
// array of 7 numbers a member (rank, slice, lane, row, start - first_ns, end - start, wait).
// Made absolute here in place (flatMembers), and `members`, the documented form (an array
// [rank, slice, lane, row, start, end, wait] a member), made when first read: for the few a user
// selects, not an array per member of every collective. A full answer is left as it is.
export function expandMembers(job) {
  for (const c of job.collectives) {
    const m = c.m;
    if (!m) continue;
    for (let k = 0; k < m.length; k += 7) {
      m[k + 4] += c.first_ns;
      m[k + 5] += m[k + 4];
    }
    Object.defineProperty(c, 'members', {
      configurable: true, enumerable: true,
      get() {
        const members = [];
        for (let k = 0; k < m.length; k += 7) members.push(m.slice(k, k + 7));
        Object.defineProperty(c, 'members', {value: members, enumerable: true, writable: true});
        return members;
      },
    });
  }
  return job;
}

// A collective's members as one array, 7 numbers a member, absolute times (either answer).
export function flatMembers(c) {
  return c.m || (c.m = c.members.flat());
}
export const keyOf = (c) => `${c.group}:${c.seq}`;
export const signedFixed = (v, digits) => {
  const s = v.toFixed(digits);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;  // never "-0.00"
};

// The lanes of a rank drawn when host lanes are hidden: its device streams (engines when it has
// none).
function deviceLane(r, lane) {
  const hardware = r.lanes.some((l) => l.group === 'hardware');
  return lane.group === 'hardware' || (!hardware && lane.group === 'engines');
}

// The heat of a skew (0..1 of the job's largest) as a colour: yellow to dark red.
export function skewColor(skew, max) {
  const f = max > 0 ? Math.min(1, skew / max) : 0;
  return `hsl(${Math.round(48 - 48 * f)} 90% ${Math.round(62 - 24 * f)}%)`;
}

export class JobTimeline extends Timeline {
  // opts: Timeline's, and job (/api/job), straggler (rank number or null), onCollective(c).
  constructor(canvas, opts) {
    super(canvas, {...opts, legend: false, overlay: (tl) => tl.drawCollective(), describe: (r) => this.describeHit(r)});
    this.job = opts.job;
    this.onCollective = opts.onCollective || (() => {});
    this.collective = null;  // the selected collective
    this.fetches = 0;        // fetches completed (for benches and tests)
    this.inflight = 0;
    this.again = false;  // the view moved while an answer was awaited: ask once it comes
    this.asked = null;   // the parameters of the latest request
    // this.frame, this.staleTimer: a draw waiting for the next frame or for a late answer.
    this.outlines = [];      // the selected collective's members as drawn: {rank, slice, x0, x1, y}
    this.collectiveLabel = null;
    this.kinds = this.job.kinds || [];
    this.rankIndex = new Map(this.job.ranks.map((r, i) => [r.rank, i]));
    this.groupRow = new Map([...new Set(this.job.collectives.map((c) => c.group))].map((g, i) => [g, Math.min(i, 3)]));
    this.setLanes({trace: {kinds: this.kinds}, groups: this.groups(opts.straggler)});
    this.setHost(false);
  }

  // Members by (rank, slice): a click on a kernel selects its collective. Made when first asked
  // for (after the first view's request is out), as are the skew marks.
  get memberOf() {
    if (!this.members) {
      this.members = new Map();
      for (const c of this.job.collectives) {
        const m = flatMembers(c);
        for (let k = 0; k < m.length; k += 7) if (m[k + 1] >= 0) this.members.set(`${m[k]}:${m[k + 1]}`, c);
      }
    }
    return this.members;
  }

  // Each collective's first and last arrival on the axis, its skew mark's name and colour.
  get skews() {
    if (!this.skewMarks) {
      let max = 0;
      for (const c of this.job.collectives) max = Math.max(max, c.skew_ns);
      this.skewMarks = this.job.collectives.map((c) => {
        let first = Infinity;
        let last = -Infinity;
        const m = flatMembers(c);
        for (let k = 4; k < m.length; k += 7) {
          first = Math.min(first, m[k]);
          last = Math.max(last, m[k]);
        }
        return {first, last, name: `${c.name} ${c.group}#${c.seq}`, color: skewColor(c.skew_ns, max)};
      });
    }
    return this.skewMarks;
  }

  // Lane groups: the skew marks, then a group per rank (the straggler's header highlighted).
  groups(straggler) {
    const skew = {key: 'collectives', title: 'collectives · skew from first to last arrival', lanes: [
      {id: SKEW_LANE, title: 'skew per collective', rows: Math.max(1, Math.min(4, this.groupRow.size)), role: 'skew',
       events: this.job.collectives.length},
    ]};
    const ranks = this.job.ranks.map((r, i) => {
      const offset = this.job.clocks_aligned ? ` · clock ${r.clock_offset_us >= 0 ? '+' : ''}${signedFixed(r.clock_offset_us, 1)} us` : '';
      const late = r.rank === straggler;
      return {
        key: `rank${r.rank}`, title: `rank ${r.rank}${offset}${late ? ' · straggler: the others waited for it most' : ''}`,
        fill: late ? '#f7c9c9' : null, straggler: late,
        lanes: r.lanes.map((l) => ({...l, id: i * LANE_STRIDE + l.id, counter: false})),
      };
    });
    return [skew, ...ranks];
  }

  // Shows only device lanes, or the host lanes too.
  setHost(host) {
    if (host) {
      this.layout.filter = null;
    } else {
      const shown = new Set([SKEW_LANE]);
      this.job.ranks.forEach((r, i) => {
        for (const l of r.lanes) if (deviceLane(r, l)) shown.add(i * LANE_STRIDE + l.id);
      });
      this.layout.filter = shown;
    }
    this.relayout();
  }

  rankOfLane(id) {
    return id >= 0 ? this.job.ranks[Math.floor(id / LANE_STRIDE)] : null;
  }

  loading() {
    return this.inflight > 0 || !!this.fetchTimer || this.again;
  }

  // A change of view: the request for it goes out first (setTimeout 0, so that the events of one
  // gesture make one request), and what is here is redrawn at the new view only if the answer is
  // late (STALE_DRAW_MS): a prompt answer is drawn once, not after a redraw of the old data.
  setView(t0, t1, opts) {
    this.deferDraw = true;
    try {
      super.setView(t0, t1, opts);
    } finally {
      this.deferDraw = false;
    }
  }

  // Until the first view's request is out (fetchNow), drawing waits for the next frame (the
  // page's set-up draws once, not at every step); a change of view's, for STALE_DRAW_MS.
  draw() {
    if (this.seq && !this.deferDraw) {
      this.cancelDraw();
      return super.draw();
    }
    if (this.frame || this.staleTimer) return;
    if (this.seq) this.drawLater(STALE_DRAW_MS);
    else this.frame = requestAnimationFrame(() => this.drawNow());
  }

  drawNow() {
    this.cancelDraw();
    super.draw();
  }

  drawLater(ms) {
    this.staleTimer = setTimeout(() => this.drawNow(), ms);
  }

  cancelDraw() {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.staleTimer);
    this.frame = 0;
    this.staleTimer = 0;
  }

  // Before the page's first request (fetchNow), as the trace view does; then as soon as the
  // input's handlers are done when no answer is awaited, else once it comes (one request in
  // flight: the latest view, not each one the mouse passed through).
  fetchSoon() {
    if (!this.seq) return super.fetchSoon();
    if (this.fetchTimer) return;
    // A microtask: it runs once the input's handlers are done, before the frame they cause (a
    // timer would wait for that frame to be drawn from the old data first).
    this.fetchTimer = true;
    queueMicrotask(() => {
      if (!this.fetchTimer) return;  // fetchNow asked meanwhile
      this.fetchTimer = null;
      if (this.inflight > 0) this.again = true;
      else this.fetch();
    });
  }

  params() {
    return {
      t0: Math.floor(this.t0), t1: Math.ceil(this.t1), width: Math.round(this.trackWidth()),
      lanes: this.layout.drawnLanes().filter((id) => id >= 0).join(','),
      compact: 1,  // items without ext, busy and kind: the job's lanes are coloured by name
      flat: 1,     // each lane's items in one array, `stride` numbers an item
    };
  }

  // Every rank's drawn lanes in one answer, on the axis already (/api/job/viewport); the skew
  // marks are made here. A view already asked for and not answered yet is not asked again.
  async fetch() {
    if (this.layout.lanes.size === 0) return;
    const params = this.params();
    const key = JSON.stringify(params);
    if (this.inflight > 0 && key === this.asked) return;
    const seq = ++this.seq;
    if (seq === 1 && this.frame) {
      // The set-up's draw (lanes without their events) waits for the first answer a while: a
      // prompt one makes it the page's only draw (a canvas frame costs tens of ms without a GPU).
      cancelAnimationFrame(this.frame);
      this.frame = 0;
      this.drawLater(FIRST_DRAW_MS);
    }
    this.asked = key;
    const started = performance.now();
    this.inflight++;
    try {
      const d = await this.api.jobViewport(params);
      window.T && window.T.push(['vp', Math.round(performance.now())]);
      if (seq < this.accepted) return;
      this.accepted = seq;
      this.lastFetchMs = performance.now() - started;
      const data = {lanes: new Map(), counters: new Map(), memory: new Map(), strings: d.strings};
      for (const l of d.lanes) data.lanes.set(l.lane, withStride(l.items, d.stride));
      data.lanes.set(SKEW_LANE, this.skewItems(data.strings));
      this.data = data;
      this.fetches++;
      window.T && window.T.push(['skews', Math.round(performance.now())]);
      this.draw();
      window.T && window.T.push(['drawn', Math.round(performance.now())]);
      this.resolveFirstPaint();
    } catch (e) {
      console.error(e);
    } finally {
      this.inflight--;
      if (this.again && this.inflight === 0) {
        this.again = false;
        if (JSON.stringify(this.params()) !== key) this.fetch();
      }
    }
  }

  // The skew lane's items (flat, as the viewport's: 9 numbers an item): one per collective, from
  // its first arrival to its last, one row per process group (at most 4); item[4] is the
  // collective's index.
  skewItems(strings) {
    const items = withStride([], 9);
    const kind = Math.max(0, this.kinds.indexOf('collective'));
    this.skewNames = new Map();
    this.job.collectives.forEach((c, k) => {
      const {first, last, name, color} = this.skews[k];
      if (!flatMembers(c).length || last < this.t0 || first > this.t1) return;
      this.skewNames.set(name, color);
      items.push(first, last - first, this.groupRow.get(c.group) || 0, strings.push(name) - 1, k, 1, 0, last - first, kind);
    });
    return items;
  }

  itemColor(name, ext, kind) {
    const heat = this.skewNames && this.skewNames.get(name);
    return heat || super.itemColor(name, ext, kind);
  }

  // The tooltip of a skew mark or a kernel: which rank, which collective.
  describeHit(hit) {
    const [ts, dur, , , id, count] = hit.item;
    if (hit.lane === SKEW_LANE) {
      const c = this.job.collectives[id];
      return [`${c.name} ${c.group}#${c.seq}: skew ${fmtNs(c.skew_ns)}`, `first arrival at ${fmtNs(ts)}`,
              c.last_rank >= 0 ? `rank ${c.last_rank} arrived last` : '', 'click to select it'].filter(Boolean);
    }
    const r = this.rankOfLane(hit.lane);
    if (!r) return null;
    const lane = this.layout.info.get(hit.lane);
    const where = `rank ${r.rank} · ${lane ? lane.title : ''}`;
    if (count > 1) return [`${count} events from ${hit.name}`, `span ${fmtNs(dur)}`, where, 'click to zoom in'];
    const c = this.memberOf.get(`${r.rank}:${id}`);
    return [hit.name, `duration ${fmtNs(dur)}`, `start ${fmtNs(ts)}`, where,
            c ? `${c.name} ${c.group}#${c.seq}: click to select it on every rank` : ''].filter(Boolean);
  }

  // The collective a click on the lanes selects: a skew mark's, or a member kernel's.
  collectiveAt(hit) {
    if (!hit) return null;
    if (hit.lane === SKEW_LANE) return this.job.collectives[hit.item[4]];
    const r = this.rankOfLane(hit.lane);
    return r ? this.memberOf.get(`${r.rank}:${hit.item[4]}`) || null : null;
  }

  // Where a rank's member is drawn: its kernel's row in its lane (or its rank's header when the
  // lane is not laid out), at the times the job viewport gives the kernel's bar.
  memberBox(m) {
    const i = this.rankIndex.get(m[0]);
    const L = m[2] >= 0 ? this.layout.lanes.get(i * LANE_STRIDE + m[2]) : null;
    const [x0, x1] = [this.xOf(m[4]), this.xOf(m[5])];
    if (L && m[3] < L.shown) return {x0, x1, y: this.screenY(L) + m[3] * ROW_H, h: ROW_H, lane: true};
    const header = this.layout.entries.find((e) => e.kind === 'group' && e.path === `rank${m[0]}`);
    if (!header) return null;
    return {x0, x1, y: this.scrollTop() + header.y - this.scrollY + 2, h: 16, lane: false};
  }

  // The selected collective: the skew as a band from the first arrival to the last, each rank's
  // kernel outlined where its lane draws it, its arrival marked; the label only while the band is
  // on screen.
  drawCollective() {
    this.outlines = [];
    this.collectiveLabel = null;
    const c = this.collective;
    if (!c || !c.members.length) return;
    const ctx = this.ctx;
    const starts = c.members.map((m) => m[4]);
    const first = Math.min(...starts);
    const last = Math.max(...starts);
    const xa = this.xOf(first);
    const xb = this.xOf(last);
    ctx.fillStyle = 'rgba(255, 170, 0, 0.18)';
    ctx.fillRect(xa, AXIS_H, Math.max(1, xb - xa), this.height - AXIS_H);
    ctx.strokeStyle = '#e0115f';
    ctx.lineWidth = 2;
    for (const m of c.members) {
      const b = this.memberBox(m);
      if (!b) continue;
      ctx.strokeRect(b.x0, b.y + 1, Math.max(2, b.x1 - b.x0), b.h - 2);
      ctx.fillStyle = '#e0115f';
      ctx.fillRect(this.xOf(m[4]) - 1, b.y, 2, b.h);
      this.outlines.push({rank: m[0], slice: m[1], x0: b.x0, x1: b.x1, y: b.y, lane: b.lane});
    }
    ctx.lineWidth = 1;
    const right = LABEL_W + this.trackWidth();
    if (xb < LABEL_W || xa > right) return;  // off screen: no label pinned at the edge
    const label = `${c.name} ${c.group}#${c.seq}: skew ${fmtNs(c.skew_ns)}` + (c.last_rank >= 0 ? ` · last: rank ${c.last_rank}` : '');
    const x = Math.max(LABEL_W + 2, xa + 2);
    ctx.font = 'bold 11px system-ui, sans-serif';
    const w = ctx.measureText(label).width + 8;
    ctx.fillStyle = 'rgba(255, 255, 255, 0.9)';
    ctx.fillRect(x, AXIS_H + 2, w, 15);
    ctx.fillStyle = '#8a3b00';
    ctx.fillText(label, x + 4, AXIS_H + 10);
    ctx.font = '11px system-ui, sans-serif';
    this.collectiveLabel = {text: label, x};
  }
}
