// The strip above the timeline: lane-group chips (fold a group) and the colour legend (what
// colours and marks mean, and the names taking the most width in view).
import {el, colorFor, kindColor} from './format.js';

export function renderGroupChips(bar, tl) {
  bar.textContent = '';
  const L = tl.layout;
  for (const g of L.groups) {
    const path = g.key;
    const chip = el('button', {class: 'group-chip', 'data-group': path, title: 'fold / unfold this lane group'},
                    `${g.title} · ${L.countLanes(g)}`);
    chip.classList.toggle('off', L.collapsed.has(path));
    chip.addEventListener('click', () => tl.toggleGroup(path));
    bar.append(chip);
  }
}

const MARKERS = [
  ['marker-selected', 'selected'], ['marker-match', 'search match'], ['marker-merged', 'merged: events < 1 px'],
  ['marker-mark', 'marked range (M)'],
];

let pending = false;
let last = '';

// Called after each draw; rebuilt at most once a frame and only when its content changes.
export function renderLegend(box, tl) {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    const entries = legendEntries(tl);
    const key = tl.colorBy + '|' + entries.map((e) => e[0]).join('|');
    if (key === last) return;
    last = key;
    const list = box.querySelector('.legend-entries');
    list.textContent = '';
    for (const [label, color] of entries) {
      list.append(el('span', {class: 'legend-item', title: label}, el('span', {class: 'swatch', style: `background:${color}`}), label));
    }
    const markers = box.querySelector('.legend-markers');
    if (!markers.childElementCount) {
      for (const [cls, label] of MARKERS) markers.append(el('span', {class: 'legend-item'}, el('span', {class: `marker ${cls}`}), label));
    }
  });
}

// By name: the names covering the most pixels in view; by kind: the kinds drawn.
function legendEntries(tl) {
  if (tl.colorBy === 'kind') {
    return [...(tl.drawnKinds || [])].sort().map((k) => [k.replace('_', ' '), kindColor(k)]);
  }
  const names = [...(tl.drawnNames || new Map()).entries()].filter(([n]) => n.trim()).sort((a, b) => b[1] - a[1]).slice(0, 6);
  return names.map(([n]) => [n.length > 32 ? n.slice(0, 31) + '…' : n, colorFor(n)]);
}
