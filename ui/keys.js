// Keyboard shortcuts and the help overlay that lists them (opened with ?).
import {el} from './format.js';

export const SHORTCUTS = [
  ['?', 'show or hide this help'],
  ['W / S, wheel', 'zoom in / out (at the cursor with the wheel); zooming out stops at the trace'],
  ['A / D, ← / →, drag', 'pan in time'],
  ['↑ / ↓, PgUp / PgDn', 'scroll the lanes (also the wheel over the labels, shift+wheel, the scrollbar)'],
  ['F', 'focus: zoom to the selected event (or the box selection, or the marked range)'],
  ['M', 'mark the selection’s time range and show its duration; M again clears it'],
  ['0', 'show the whole trace'],
  ['/', 'go to the search box'],
  ['Enter / Shift+Enter', 'in the search box: next / previous match'],
  ['shift+drag', 'select a box: a summary of what it covers, and the op table for that range'],
  ['click', 'select an event: details and its dependency chain'],
  ['Esc', 'close this help; clear the selection, box and mark'],
];

export function renderHelp(box, onClose, shortcuts = SHORTCUTS, note = null) {
  box.textContent = '';
  const table = el('table', {class: 'kv'});
  for (const [k, v] of shortcuts) table.append(el('tr', {}, el('th', {}, el('kbd', {}, k)), el('td', {}, v)));
  box.append(el('div', {class: 'help-card', role: 'dialog', 'aria-label': 'keyboard shortcuts'},
                el('h3', {}, 'Keyboard and mouse'), table,
                el('p', {class: 'muted'}, note || 'Lane groups fold with their header; a lane’s pin (at the right of its label) keeps it at the top; ' +
                                          '“more rows” opens a deep lane. The URL keeps the view: share it or edit it.'),
                el('button', {onclick: onClose}, 'close')));
}

// Inputs that take typed text: keys typed there are text, not shortcuts. A checkbox, a radio
// button, a select or a button keeps the shortcuts working once clicked.
const TEXT_INPUTS = new Set(['text', 'search', 'number', 'email', 'password', 'url', 'tel', 'date', 'time']);

export function typingInto(target) {
  if (!target || !target.tagName) return false;
  if (target.isContentEditable || target.tagName === 'TEXTAREA') return true;
  return target.tagName === 'INPUT' && TEXT_INPUTS.has((target.type || 'text').toLowerCase());
}

// Installs the global key handler. actions: {timeline() (the focused one), help(), escape(),
// focus(), mark(), whole(), search()}. Keys work wherever focus is not in a text field (a focused
// select keeps its arrow keys).
export function installKeys(actions) {
  window.addEventListener('keydown', (e) => {
    if (typingInto(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target && e.target.tagName === 'SELECT' && e.key.startsWith('Arrow')) return;
    const k = e.key.toLowerCase();
    let handled = true;
    if (e.key === '?') actions.help();
    else if (e.key === 'Escape') actions.escape();
    else if (k === 'f') actions.focus();
    else if (k === 'm') actions.mark();
    else if (k === '0') actions.whole();
    else if (k === '/') actions.search();
    else handled = actions.timeline().key(k);
    if (handled) e.preventDefault();
  });
}
