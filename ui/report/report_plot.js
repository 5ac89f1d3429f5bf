// The HTML report's own x-y plot on canvas, used when the build could not bundle uPlot (npm
// offline): axes (linear or log), lines and points, and the nearest point's tooltip. The same
// spec as R.xy's.
'use strict';
(function (R) {
  // Ticks for [lo, hi]: powers of ten on a log axis, 1-2-5 steps on a linear one.
  function ticks(lo, hi, log) {
    const out = [];
    if (log) {
      for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); ++e) out.push(10 ** e);
      return out.filter((t) => t >= lo && t <= hi);
    }
    const raw = (hi - lo) / 5 || 1, mag = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
    for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(t);
    return out;
  }

  function range(values, log) {
    const v = values.filter((x) => x !== null && x !== undefined && (!log || x > 0));
    if (!v.length) return [log ? 1 : 0, log ? 10 : 1];
    let lo = Math.min(...v), hi = Math.max(...v);
    if (log) return [lo / 1.5, hi * 1.5];
    if (lo === hi) { lo -= Math.abs(lo) * 0.1 || 1; hi += Math.abs(hi) * 0.1 || 1; }
    const pad = (hi - lo) * 0.05;
    return [lo >= 0 ? 0 : lo - pad, hi + pad];
  }

  // Draws into {ctx, c, width, height} (from the chart's canvas).
  R.drawXyCanvas = function (box, spec, {c, ctx, width, height}) {
    const left = 80, right = 12, top = 24, bottom = 40;
    const xs = spec.series.flatMap((s) => s.xs), ys = spec.series.flatMap((s) => s.ys);
    const [x0, x1] = range(xs, spec.x.log), [y0, y1] = range(ys, spec.y.log);
    const tx = (v) => spec.x.log ? Math.log10(v / x0) / Math.log10(x1 / x0) : (v - x0) / (x1 - x0);
    const ty = (v) => spec.y.log ? Math.log10(v / y0) / Math.log10(y1 / y0) : (v - y0) / (y1 - y0);
    const px = (v) => left + tx(v) * (width - left - right);
    const py = (v) => height - bottom - ty(v) * (height - top - bottom);
    ctx.strokeStyle = '#dde1e8';
    ctx.fillStyle = '#555';
    for (const t of ticks(x0, x1, spec.x.log)) {
      ctx.beginPath(); ctx.moveTo(px(t), top); ctx.lineTo(px(t), height - bottom); ctx.stroke();
      ctx.textAlign = 'center';
      ctx.fillText((spec.x.fmt || R.fmtNum)(t), px(t), height - bottom + 12);
    }
    for (const t of ticks(y0, y1, spec.y.log)) {
      ctx.beginPath(); ctx.moveTo(left, py(t)); ctx.lineTo(width - right, py(t)); ctx.stroke();
      ctx.textAlign = 'right';
      ctx.fillText((spec.y.fmt || R.fmtNum)(t), left - 6, py(t));
    }
    ctx.textAlign = 'center';
    ctx.fillText(spec.x.label, left + (width - left - right) / 2, height - 10);
    ctx.save();
    ctx.translate(12, top + (height - top - bottom) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(spec.y.label, 0, 0);
    ctx.restore();
    const points = [];  // [x, y, tip] in pixels, for the tooltip
    let lx = left;
    for (const s of spec.series) {
      ctx.strokeStyle = ctx.fillStyle = s.color;
      ctx.textAlign = 'left';
      ctx.fillRect(lx, 6, 12, 10);
      ctx.fillText(s.label, lx + 16, 11);
      lx += 28 + ctx.measureText(s.label).width;
      const ok = (i) => s.ys[i] !== null && s.ys[i] !== undefined && (!spec.x.log || s.xs[i] > 0) && (!spec.y.log || s.ys[i] > 0);
      if (s.line !== false) {
        ctx.beginPath();
        let started = false;
        s.xs.forEach((x, i) => {
          if (!ok(i)) return;
          if (started) ctx.lineTo(px(x), py(s.ys[i])); else ctx.moveTo(px(x), py(s.ys[i]));
          started = true;
        });
        ctx.stroke();
      }
      s.xs.forEach((x, i) => {
        if (!ok(i)) return;
        if (s.points === true || s.line === false) {
          ctx.beginPath();
          ctx.arc(px(x), py(s.ys[i]), s.line === false ? 3.5 : 2, 0, 2 * Math.PI);
          ctx.fill();
        }
        if (s.tips && s.tips[i]) points.push([px(x), py(s.ys[i]), s.tips[i]]);
      });
    }
    c.addEventListener('mousemove', (e) => {
      const r = c.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
      let best = null, dist = 144;
      for (const p of points) {
        const d = (p[0] - mx) ** 2 + (p[1] - my) ** 2;
        if (d < dist) { dist = d; best = p; }
      }
      if (best) R.showTip(e.pageX, e.pageY, [best[2]]); else R.hideTip();
    });
    c.addEventListener('mouseleave', R.hideTip);
  };
})(window.OpscopeReport = window.OpscopeReport || {});
