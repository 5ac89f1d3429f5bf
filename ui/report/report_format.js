// The HTML report's shared helpers: number and time formatting, stable colours, and element
// building that only ever inserts text (names from a trace never reach innerHTML).
// Every report script adds to the one global `OpscopeReport` (plain scripts, inlined in order).
'use strict';
(function (R) {
  // "12.345 us" / "1.234 ms" / "830 ns" for nanoseconds.
  R.fmtNs = function (ns) {
    if (ns === null || ns === undefined || Number.isNaN(ns)) return '-';
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return Math.round(ns) + ' ns';
  };
  R.fmtUs = (us) => (us === null || us === undefined ? '-' : R.fmtNs(us * 1e3));
  R.fmtBytes = function (b) {
    if (b === null || b === undefined || b < 0) return '-';
    const a = Math.abs(b);
    if (a >= 1024 ** 3) return (b / 1024 ** 3).toFixed(2) + ' GiB';
    if (a >= 1024 ** 2) return (b / 1024 ** 2).toFixed(2) + ' MiB';
    if (a >= 1024) return (b / 1024).toFixed(2) + ' KiB';
    return b + ' B';
  };
  R.fmtPct = (p) => (p === null || p === undefined || Number.isNaN(p) ? '-' : p.toFixed(1) + '%');
  R.fmtSignedPct = (p) => (p === null || p === undefined ? 'new' : (p >= 0 ? '+' : '') + p.toFixed(1) + '%');
  R.fmtNum = function (v, digits = 3) {
    if (v === null || v === undefined || Number.isNaN(v)) return '-';
    if (typeof v !== 'number') return String(v);
    if (Number.isInteger(v)) return v.toLocaleString('en-US');
    return v.toPrecision(digits);
  };

  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return h >>> 0;
  }
  // A stable colour per name.
  R.colorFor = function (key) {
    const h = hash(String(key));
    return `hsl(${h % 360} ${45 + ((h >>> 9) % 30)}% ${50 + ((h >>> 17) % 15)}%)`;
  };
  // The fixed colours of the device timeline's parts and the idle causes.
  R.colors = {
    computation: '#4878d0', communication: '#ee854a', memcpy: '#6acc64', idle: '#d0d4dc',
    host_wait: '#d65f5f', kernel_wait: '#956cb4', other: '#8c613c', baseline: '#7f8ea8',
    candidate: '#e0115f', worse: '#d65f5f', better: '#4c9f70',
  };

  // el('div', {class: 'x'}, 'text', child, ...): children that are not nodes become text nodes.
  R.el = function (tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'class') e.className = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  };

  // The one tooltip: text only, placed near the pointer.
  let tip = null;
  R.showTip = function (x, y, lines) {
    if (!tip) {
      tip = R.el('div', {class: 'tip', role: 'tooltip'});
      document.body.append(tip);
    }
    tip.replaceChildren(...lines.map((l, i) => R.el(i === 0 ? 'b' : 'div', {}, l)));
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.min(x + 14, window.scrollX + document.documentElement.clientWidth - w - 4) + 'px';
    tip.style.top = Math.max(y - h - 10, window.scrollY + 2) + 'px';
  };
  R.hideTip = () => { if (tip) tip.hidden = true; };
})(window.OpscopeReport = window.OpscopeReport || {});
