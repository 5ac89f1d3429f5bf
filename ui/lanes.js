// Lane layout of a timeline: lane groups (nested, collapsible) with headers, lanes with rows
// (a deep lane shows a few rows until expanded), and pinned lanes drawn above the scrolling area.
// Positions are in CSS pixels; a lane's `y` is relative to its area (the pinned strip or the
// scrolling content), which the timeline maps to the screen. A nested group marked `top` (the
// memory lanes in the hardware group) is laid out above its parent's own lanes.
import {MEMORY_H} from './memory_lane.js';

export const AXIS_H = 22;
export const GROUP_H = 20;
export const ROW_H = 16;
export const COUNTER_H = 34;
export const LANE_GAP = 3;

// Rows a lane shows while collapsed (0 = all): a Python stack 3, any other lane deeper than 16
// rows 12, so device streams are on screen at first paint.
export function collapsedRows(lane) {
  if (lane.counter || lane.memory) return 0;
  if (lane.role === 'python' && lane.rows > 4) return 3;
  if (lane.rows > 16) return 12;
  return 0;
}

// The key path of a group: "framework", or "rank1/framework" inside a "rank1" group.
function pathOf(parent, group) {
  return parent ? `${parent}/${group.key}` : group.key;
}

export class LaneLayout {
  // showGroups: draw group headers; groupOrder: top-level group keys listed first, in order.
  constructor({showGroups = true, groupOrder = null} = {}) {
    this.showGroups = showGroups;
    this.groupOrder = groupOrder;
    this.groups = [];
    this.collapsed = new Set();  // group paths
    this.expanded = new Set();   // lane ids whose hidden rows are shown
    this.pinned = [];            // lane ids, in pin order
    this.filter = null;          // Set of lane ids, or null for all
    this.info = new Map();       // lane id -> lane (from the server)
    this.groupPaths = new Map(); // group path -> group
    this.laneGroup = new Map();  // lane id -> path of its innermost group
    this.entries = [];           // headers and lanes of the scrolling area, top to bottom
    this.lanes = new Map();      // lane id -> {y, h, lane, pinned, shown, depth}
    this.pinnedH = 0;
    this.contentH = 0;
  }

  setGroups(groups) {
    this.groups = this.ordered(groups);
    this.info = new Map();
    this.groupPaths = new Map();
    this.laneGroup = new Map();
    const walk = (list, parent) => {
      for (const g of list) {
        const path = pathOf(parent, g);
        this.groupPaths.set(path, g);
        for (const l of g.lanes || []) {
          this.info.set(l.id, l);
          this.laneGroup.set(l.id, path);
        }
        walk(g.groups || [], path);
      }
    };
    walk(this.groups, '');
    this.pinned = this.pinned.filter((id) => this.info.has(id));
  }

  ordered(groups) {
    if (!this.groupOrder) return groups;
    const rank = (g) => {
      const i = this.groupOrder.indexOf(g.key);
      return i < 0 ? this.groupOrder.length : i;
    };
    return groups.map((g, i) => ({g, i})).sort((a, b) => rank(a.g) - rank(b.g) || a.i - b.i).map((x) => x.g);
  }

  visible(id) {
    return !this.filter || this.filter.has(id);
  }

  // Lanes shown by the group, its nested groups included (for header counts).
  countLanes(g) {
    let n = (g.lanes || []).filter((l) => this.visible(l.id)).length;
    for (const c of g.groups || []) n += this.countLanes(c);
    return n;
  }

  laneHeight(lane, shown) {
    if (lane.memory) return MEMORY_H;
    return lane.counter ? COUNTER_H : Math.max(1, shown) * ROW_H;
  }

  shownRows(lane) {
    const limit = collapsedRows(lane);
    return limit > 0 && !this.expanded.has(lane.id) ? limit : lane.rows;
  }

  layout() {
    this.entries = [];
    this.lanes = new Map();
    let y = 0;
    for (const id of this.pinned) {
      const lane = this.info.get(id);
      if (!lane || !this.visible(id)) continue;
      const shown = this.shownRows(lane);
      const h = this.laneHeight(lane, shown);
      this.lanes.set(id, {y, h, lane, pinned: true, shown, depth: 0});
      y += h + LANE_GAP;
    }
    this.pinnedH = y > 0 ? y + 2 : 0;
    const pinned = new Set(this.pinned);
    y = 0;
    const walk = (list, parent, depth) => {
      for (const g of list) {
        const path = pathOf(parent, g);
        const count = this.countLanes(g);
        if (count === 0) continue;
        const collapsed = this.collapsed.has(path);
        let header = null;
        if (this.showGroups) {
          header = {kind: 'group', path, group: g, depth, y, end: 0, collapsed, count};
          this.entries.push(header);
          y += GROUP_H;
        }
        if (!collapsed) {
          const nested = g.groups || [];
          walk(nested.filter((c) => c.top), path, depth + 1);
          for (const l of g.lanes || []) {
            if (!this.visible(l.id) || pinned.has(l.id)) continue;
            const shown = this.shownRows(l);
            const h = this.laneHeight(l, shown);
            const entry = {kind: 'lane', y, h, lane: l, pinned: false, shown, depth: this.showGroups ? depth + 1 : 0};
            this.entries.push(entry);
            this.lanes.set(l.id, entry);
            y += h + LANE_GAP;
          }
          walk(nested.filter((c) => !c.top), path, depth + 1);
        }
        if (header) header.end = y;
      }
    };
    walk(this.groups, '', 0);
    this.contentH = y + 10;
  }

  // Makes a lane drawable: opens the groups around it and, if `row` is hidden, its rows.
  ensureShown(id, row = 0) {
    let changed = false;
    let path = this.laneGroup.get(id);
    while (path) {
      if (this.collapsed.delete(path)) changed = true;
      const cut = path.lastIndexOf('/');
      path = cut < 0 ? '' : path.slice(0, cut);
    }
    const lane = this.info.get(id);
    if (lane && row >= this.shownRows(lane)) {
      this.expanded.add(id);
      changed = true;
    }
    return changed;
  }

  toggleGroup(path) {
    if (this.collapsed.has(path)) this.collapsed.delete(path);
    else this.collapsed.add(path);
  }

  togglePin(id) {
    const i = this.pinned.indexOf(id);
    if (i >= 0) this.pinned.splice(i, 1);
    else this.pinned.push(id);
  }

  toggleRows(id) {
    if (this.expanded.has(id)) this.expanded.delete(id);
    else this.expanded.add(id);
  }

  // Lane ids whose events are drawn (pinned ones included).
  drawnLanes() {
    return [...this.lanes.keys()];
  }

  allDrawn() {
    return !this.filter && this.collapsed.size === 0 && this.lanes.size === this.info.size;
  }
}
