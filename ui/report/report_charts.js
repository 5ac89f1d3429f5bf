// The HTML report's charts. Bars, stacked bars, diverging bars, the per-stream overview strips and
// the heatmap are drawn on canvas here; x-y charts (memory curves, the roofline, per-step figures)
// by uPlot when the build bundled it, else by the small canvas plot below. Each chart is a
// <div class="chart" data-chart=NAME>; once drawn it carries data-drawn="1" and data-marks (the
// bars, cells or points drawn), which the browser tests read. Labels are drawn with fillText, and
// tooltips set textContent: names stay text.
'use strict';
(function (R) {
  const draws = [];  // [box, draw()] in page order, redrawn when the width changes
  const FONT = '12px system-ui, sans-serif';

  // A chart box: title, the drawing area, and a caption. `draw(box)` runs once the box is in the
  // page (it needs a width) and again after resizes.
  R.chart = function (name, title, caption, draw) {
    const area = R.el('div', {class: 'chart-area'});
    const box = R.el('figure', {class: 'chart', 'data-chart': name, 'data-drawn': '0'},
                     R.el('figcaption', {}, R.el('b', {}, title), caption ? R.el('span', {class: 'muted'}, ' ' + caption) : null),
                     area);
    box.area = area;
    draws.push([box, draw]);
    return box;
  };

  R.drawAll = function () {
    for (const [box, draw] of draws) {
      if (!box.isConnected) continue;
      const marks = draw(box);
      if (marks !== undefined) R.drawn(box, marks);
    }
  };
  R.drawn = function (box, marks) {
    box.dataset.drawn = '1';
    box.dataset.marks = String(marks);
  };
  let resizeTimer = 0, lastWidth = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (document.documentElement.clientWidth === lastWidth) return;
      lastWidth = document.documentElement.clientWidth;
      for (const [box] of draws) box.area.replaceChildren();
      R.drawAll();
    }, 150);
  });

  // A canvas of the area's width and `height` CSS pixels, scaled for the screen.
  function canvas(box, height) {
    const width = Math.max(240, box.area.clientWidth || 600);
    const c = R.el('canvas');
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(width * dpr);
    c.height = Math.round(height * dpr);
    c.style.width = width + 'px';
    c.style.height = height + 'px';
    box.area.replaceChildren(c);
    const ctx = c.getContext('2d');
    ctx.scale(dpr, dpr);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    return {c, ctx, width, height};
  }

  // Text cut to `px` pixels with an ellipsis.
  function fit(ctx, text, px) {
    text = String(text);
    if (ctx.measureText(text).width <= px) return text;
    let lo = 0, hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + '\u2026').width <= px) lo = mid; else hi = mid - 1;
    }
    return text.slice(0, lo) + '\u2026';
  }

  // Hover over rows of a canvas: rowAt(y) -> index or -1, lines(index) -> tooltip text lines.
  function hoverRows(c, rowAt, lines) {
    c.addEventListener('mousemove', (e) => {
      const r = c.getBoundingClientRect();
      const i = rowAt(e.clientY - r.top, e.clientX - r.left);
      if (i === null || i < 0) R.hideTip(); else R.showTip(e.pageX, e.pageY, lines(i));
    });
    c.addEventListener('mouseleave', R.hideTip);
  }

  // Horizontal bars, one per item: {label, value, color?, text?, tip?: [lines]}.
  R.hbars = function (name, title, caption, items, fmt) {
    return R.chart(name, title, caption, (box) => {
      const row = 20, labelW = 0.38;
      const {c, ctx, width} = canvas(box, Math.max(1, items.length) * row + 8);
      const max = Math.max(...items.map((d) => d.value), 0) || 1;
      const x0 = width * labelW, barW = width - x0 - 90;
      items.forEach((d, i) => {
        const y = 4 + i * row;
        ctx.fillStyle = '#1b1f27';
        ctx.textAlign = 'right';
        ctx.fillText(fit(ctx, d.label, x0 - 8), x0 - 6, y + row / 2);
        ctx.fillStyle = d.color || R.colorFor(d.label);
        ctx.fillRect(x0, y + 3, Math.max(1, (barW * d.value) / max), row - 6);
        ctx.fillStyle = '#1b1f27';
        ctx.textAlign = 'left';
        ctx.fillText(d.text || fmt(d.value), x0 + Math.max(1, (barW * d.value) / max) + 4, y + row / 2);
      });
      hoverRows(c, (y) => Math.floor((y - 4) / row) < items.length ? Math.floor((y - 4) / row) : -1,
                (i) => items[i].tip || [items[i].label, fmt(items[i].value)]);
      return items.length;
    });
  };

  // Stacked horizontal bars: rows [{label, values: {key: v}}], parts [{key, label, color}].
  R.stacked = function (name, title, caption, rows, parts, fmt) {
    return R.chart(name, title, caption, (box) => {
      const row = 22, legend = 22;
      const {c, ctx, width} = canvas(box, rows.length * row + legend + 8);
      const x0 = Math.min(220, width * 0.3), barW = width - x0 - 12;
      const totals = rows.map((r) => parts.reduce((s, p) => s + Math.max(0, r.values[p.key] || 0), 0));
      const max = Math.max(...totals, 0) || 1;
      let marks = 0;
      let lx = x0;
      ctx.textAlign = 'left';
      for (const p of parts) {  // the legend
        ctx.fillStyle = p.color;
        ctx.fillRect(lx, 6, 12, 10);
        ctx.fillStyle = '#1b1f27';
        ctx.fillText(p.label, lx + 16, 11);
        lx += 24 + ctx.measureText(p.label).width;
      }
      rows.forEach((r, i) => {
        const y = legend + i * row;
        ctx.fillStyle = '#1b1f27';
        ctx.textAlign = 'right';
        ctx.fillText(fit(ctx, r.label, x0 - 8), x0 - 6, y + row / 2);
        let x = x0;
        for (const p of parts) {
          const w = (barW * Math.max(0, r.values[p.key] || 0)) / max;
          if (w <= 0) continue;
          ctx.fillStyle = p.color;
          ctx.fillRect(x, y + 3, Math.max(1, w), row - 6);
          x += w;
          ++marks;
        }
      });
      hoverRows(c, (y) => {
        const i = Math.floor((y - legend) / row);
        return i >= 0 && i < rows.length ? i : -1;
      }, (i) => [rows[i].label, ...parts.map((p) => `${p.label}: ${fmt(rows[i].values[p.key] || 0)}`)]);
      return marks;
    });
  };

  // Bars left (smaller in B) and right (larger in B) of a centre line: items [{label, a, b}].
  R.diverging = function (name, title, caption, items, fmt) {
    return R.chart(name, title, caption, (box) => {
      const row = 20;
      const {c, ctx, width} = canvas(box, Math.max(1, items.length) * row + 8);
      const x0 = width * 0.38, mid = x0 + (width - x0 - 10) / 2, half = (width - x0 - 10) / 2 - 70;
      const max = Math.max(...items.map((d) => Math.abs(d.b - d.a)), 0) || 1;
      ctx.strokeStyle = '#99a';
      ctx.beginPath();
      ctx.moveTo(mid, 0);
      ctx.lineTo(mid, items.length * row + 8);
      ctx.stroke();
      items.forEach((d, i) => {
        const y = 4 + i * row, delta = d.b - d.a, w = Math.max(1, (half * Math.abs(delta)) / max);
        ctx.fillStyle = '#1b1f27';
        ctx.textAlign = 'right';
        ctx.fillText(fit(ctx, d.label, x0 - 8), x0 - 6, y + row / 2);
        ctx.fillStyle = delta > 0 ? R.colors.worse : R.colors.better;
        ctx.fillRect(delta > 0 ? mid : mid - w, y + 3, w, row - 6);
        ctx.fillStyle = '#1b1f27';
        ctx.textAlign = delta > 0 ? 'left' : 'right';
        ctx.fillText((delta > 0 ? '+' : '-') + fmt(Math.abs(delta)), delta > 0 ? mid + w + 4 : mid - w - 4, y + row / 2);
      });
      hoverRows(c, (y) => Math.floor((y - 4) / row) < items.length ? Math.floor((y - 4) / row) : -1,
                (i) => [items[i].label, `${fmt(items[i].a)} -> ${fmt(items[i].b)}`]);
      return items.length;
    });
  };

  // A grid of cells: values[r][c] (null = none), darker as larger.
  R.heatmap = function (name, title, caption, rowLabels, colLabels, values, fmt) {
    return R.chart(name, title, caption, (box) => {
      const row = 22, top = 20, x0 = 90;
      const {c, ctx, width} = canvas(box, rowLabels.length * row + top + 6);
      const cellW = Math.max(2, (width - x0 - 8) / Math.max(1, colLabels.length));
      const max = Math.max(0, ...values.flat().filter((v) => v !== null)) || 1;
      let marks = 0;
      ctx.textAlign = 'center';
      ctx.fillStyle = '#1b1f27';
      const every = Math.ceil(40 / cellW);
      colLabels.forEach((l, j) => { if (j % every === 0) ctx.fillText(String(l), x0 + (j + 0.5) * cellW, top / 2); });
      rowLabels.forEach((l, i) => {
        ctx.textAlign = 'right';
        ctx.fillStyle = '#1b1f27';
        ctx.fillText(fit(ctx, l, x0 - 8), x0 - 6, top + i * row + row / 2);
        values[i].forEach((v, j) => {
          if (v === null || v === undefined) return;
          const t = v / max;
          ctx.fillStyle = `rgb(${255 - 80 * t}, ${255 - 215 * t}, ${255 - 215 * t})`;
          ctx.fillRect(x0 + j * cellW, top + i * row + 1, Math.max(1, cellW - 1), row - 2);
          ++marks;
        });
      });
      hoverRows(c, (y, x) => {
        const i = Math.floor((y - top) / row), j = Math.floor((x - x0) / cellW);
        return i >= 0 && i < rowLabels.length && j >= 0 && j < colLabels.length ? i * colLabels.length + j : -1;
      }, (k) => {
        const i = Math.floor(k / colLabels.length), j = k % colLabels.length;
        return [`${rowLabels[i]}, step ${colLabels[j]}`, fmt(values[i][j])];
      });
      return marks;
    });
  };

  // The whole trace per stream: columns merged into pixels by their maximum (the busiest shows),
  // coloured by the slice covering most of the column, opaque as the stream is busy.
  R.strips = function (name, title, caption, ov) {
    return R.chart(name, title, caption, (box) => {
      const row = 16, x0 = Math.min(260, (box.area.clientWidth || 600) * 0.28), axis = 18;
      const {c, ctx, width} = canvas(box, ov.tracks.length * row + axis + 4);
      const plotW = width - x0 - 6, cols = ov.columns, span = ov.end_ns - ov.start_ns;
      let marks = 0;
      ov.tracks.forEach((t, i) => {
        const y = i * row;
        ctx.fillStyle = t.is_device ? '#1d2a44' : '#555';
        ctx.textAlign = 'right';
        ctx.fillText(fit(ctx, (t.process ? t.process + ' / ' : '') + t.name, x0 - 8), x0 - 6, y + row / 2);
        ctx.fillStyle = '#f3f4f7';
        ctx.fillRect(x0, y + 1, plotW, row - 2);
        for (let px = 0; px < plotW; ++px) {
          const c0 = Math.floor((px * cols) / plotW), c1 = Math.max(c0 + 1, Math.floor(((px + 1) * cols) / plotW));
          let best = 0, top = -1;
          for (let k = c0; k < c1 && k < cols; ++k) {
            if (t.busy_permille[k] > best) { best = t.busy_permille[k]; top = t.top_name[k]; }
          }
          if (best <= 0) continue;
          ctx.globalAlpha = 0.35 + 0.65 * (best / 1000);
          ctx.fillStyle = top >= 0 ? R.colorFor(ov.names[top]) : '#4878d0';
          ctx.fillRect(x0 + px, y + 1, 1, row - 2);
          ++marks;
        }
        ctx.globalAlpha = 1;
      });
      const ay = ov.tracks.length * row + axis / 2;  // the time axis: five ticks
      ctx.fillStyle = '#555';
      for (let k = 0; k <= 4; ++k) {
        ctx.textAlign = k === 0 ? 'left' : k === 4 ? 'right' : 'center';
        ctx.fillText(R.fmtNs((span * k) / 4), x0 + (plotW * k) / 4, ay);
      }
      hoverRows(c, (y, x) => {
        const i = Math.floor(y / row);
        if (i < 0 || i >= ov.tracks.length || x < x0) return -1;
        return i * cols + Math.min(cols - 1, Math.floor(((x - x0) * cols) / plotW));
      }, (k) => {
        const t = ov.tracks[Math.floor(k / cols)], col = k % cols;
        return [(t.process ? t.process + ' / ' : '') + t.name,
                `at ${R.fmtNs((col * span) / cols)}: busy ${(t.busy_permille[col] / 10).toFixed(1)}%`,
                t.top_name[col] >= 0 ? ov.names[t.top_name[col]] : 'idle'];
      });
      return marks;
    });
  };

  // An x-y chart. spec: {x: {label, log?, fmt?}, y: {label, log?, fmt?}, series: [{label, color,
  // xs, ys (null = no point), line?: bool, points?: bool, tips?: [text per point]}], height?}.
  // Every series shares one ascending xs when drawn by uPlot (R.alignSeries makes it so).
  R.xy = function (name, title, caption, spec) {
    return R.chart(name, title, caption, (box) => {
      const marks = spec.series.reduce((n, s) => n + s.ys.filter((v) => v !== null && v !== undefined).length, 0);
      if (typeof window.uPlot === 'function') {
        drawUplot(box, spec);
        return undefined;  // R.drawn runs from uPlot's draw hook
      }
      R.drawXyCanvas(box, spec, canvas(box, spec.height || 300));
      return marks;
    });
  };

  function drawUplot(box, spec) {
    const width = Math.max(240, box.area.clientWidth || 600);
    const xs = spec.series[0].xs;
    const marks = spec.series.reduce((n, s) => n + s.ys.filter((v) => v !== null && v !== undefined).length, 0);
    const axisFmt = (f) => (u, vals) => vals.map((v) => (v === null ? '' : f(v)));
    const opts = {
      width, height: spec.height || 300,
      scales: {x: {time: false, distr: spec.x.log ? 3 : 1}, y: {distr: spec.y.log ? 3 : 1}},
      // spec.x.integer: ticks only on whole numbers (step indices).
      axes: [Object.assign({label: spec.x.label, values: axisFmt(spec.x.fmt || R.fmtNum)},
                           spec.x.integer ? {incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]} : {}),
             {label: spec.y.label, values: axisFmt(spec.y.fmt || R.fmtNum), size: 80}],
      series: [{label: spec.x.label}].concat(spec.series.map((s) => ({
        label: s.label, stroke: s.color, width: s.line === false ? 0 : 1.5,
        paths: s.line === false ? () => null : undefined,
        points: {show: s.points === true || s.line === false, size: s.line === false ? 7 : 4, fill: s.color},
        spanGaps: s.line !== false,
      }))),
      legend: {show: true},
      cursor: {points: {show: false}},
      hooks: {
        draw: [() => R.drawn(box, marks)],
        setCursor: [(u) => {
          const i = u.cursor.idx;
          if (i === null || i === undefined || u.cursor.left < 0) { R.hideTip(); return; }
          const lines = [];
          for (const s of spec.series) {
            if (s.ys[i] !== null && s.ys[i] !== undefined && s.tips) lines.push(s.tips[i]);
          }
          if (!lines.length) { R.hideTip(); return; }
          const r = u.over.getBoundingClientRect();
          R.showTip(r.left + window.scrollX + u.cursor.left, r.top + window.scrollY + u.cursor.top, lines);
        }],
      },
    };
    box.area.replaceChildren();
    // eslint-disable-next-line no-new
    new window.uPlot(opts, [xs].concat(spec.series.map((s) => s.ys)), box.area);
  }

  // Series over different xs made to share one ascending xs (null where a series has no point);
  // equal xs of different points are nudged apart by a relative 1e-9 (invisible, even on log axes).
  R.alignSeries = function (series) {
    const all = [];
    series.forEach((s, si) => s.xs.forEach((x, i) => all.push({x, si, i})));
    all.sort((p, q) => p.x - q.x);
    for (let k = 1; k < all.length; ++k) {
      if (all[k].x <= all[k - 1].x) all[k].x = all[k - 1].x + Math.abs(all[k - 1].x) * 1e-9 + 1e-300;
    }
    const xs = all.map((p) => p.x);
    const out = series.map((s) => Object.assign({}, s, {xs, ys: new Array(xs.length).fill(null),
                                                         tips: new Array(xs.length).fill(null)}));
    all.forEach((p, k) => {
      out[p.si].ys[k] = series[p.si].ys[p.i];
      out[p.si].tips[k] = series[p.si].tips ? series[p.si].tips[p.i] : null;
    });
    return out;
  };
})(window.OpscopeReport = window.OpscopeReport || {});
