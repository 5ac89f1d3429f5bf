"""Matplotlib figures of a Trace (``trace.plot``) and a Job (``job.plot``). Imported only when a
plot is asked for; every method returns a ``matplotlib.figure.Figure`` (not shown: a notebook
displays it, a script calls ``fig.savefig``). Figures are built with the object API, so no
pyplot state or backend is touched."""

import numpy as np
import pandas as pd
from matplotlib.figure import Figure


def _empty(ax, message):
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


class TracePlots:
    def __init__(self, trace):
        self._trace = trace

    def timeline(self, columns=800, max_tracks=24):
        """The whole trace per track (device streams first): each column's busy share, so the
        busiest pixel shows (the overview of the HTML report)."""
        ov = self._trace.overview(columns, max_tracks)
        tracks = ov.get("tracks", [])
        fig = Figure(figsize=(10, 0.4 * max(len(tracks), 3) + 1))
        ax = fig.add_subplot()
        if not tracks:
            _empty(ax, "no slices")
            return fig
        grid = np.array([t["busy_permille"] for t in tracks], dtype=float) / 1000
        span_ms = (ov["end_ns"] - ov["start_ns"]) / 1e6
        ax.imshow(grid, aspect="auto", cmap="Blues", vmin=0, vmax=1, interpolation="nearest",
                  extent=(0, span_ms, len(tracks) - 0.5, -0.5))
        ax.set_yticks(range(len(tracks)))
        ax.set_yticklabels([f"{t['process']} / {t['name']}" for t in tracks], fontsize=7)
        ax.set_xlabel("time since the first slice (ms)")
        ax.set_title("Busy share per track")
        fig.tight_layout()
        return fig

    def roofline(self, device_spec=""):
        """Each perf-model row as a point (arithmetic intensity, achieved TFLOP/s) against the
        device's memory and compute roofs."""
        pm = self._trace.perf_model(device_spec)
        fig = Figure(figsize=(7, 5))
        ax = fig.add_subplot()
        rows = pm
        if len(pm) and {"flops_per_byte", "tflops_per_s_mean"} <= set(pm.columns):
            x = pd.to_numeric(pm["flops_per_byte"], errors="coerce")
            y = pd.to_numeric(pm["tflops_per_s_mean"], errors="coerce")
            rows = pm[(x > 0) & (y > 0)]
        else:
            rows = pm.iloc[0:0]
        if not len(rows):
            _empty(ax, "no modelled op")
            return fig
        spec = pm.attrs.get("device_spec") or {}
        bw_tbps = (spec.get("mem_bw_gbps") or 0) / 1000
        peaks = spec.get("tflops") or {}
        # The 16-bit matrix peak, the one most ops are measured against; else the highest.
        peak = peaks.get("matrix_bf16") or max(
            [v for v in peaks.values() if isinstance(v, (int, float))] or [0])
        x = rows["flops_per_byte"].to_numpy(dtype=float)
        ax.scatter(x, rows["tflops_per_s_mean"], s=18, alpha=0.8, label="ops")
        if bw_tbps > 0 and peak > 0:
            xs = np.logspace(np.log10(min(x.min(), peak / bw_tbps) / 4),
                             np.log10(max(x.max(), peak / bw_tbps) * 4), 100)
            ax.plot(xs, np.minimum(xs * bw_tbps, peak), color="k", lw=1,
                    label=f"roof ({spec.get('name', 'device')}, bf16 matrix peak)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("FLOPs per byte")
        ax.set_ylabel("TFLOP/s")
        ax.set_title("Roofline")
        ax.legend()
        fig.tight_layout()
        return fig

    def idle(self):
        """Idle time per device stream by cause (host wait, kernel wait, other), stacked."""
        idle = self._trace.idle_breakdown()
        fig = Figure(figsize=(8, 0.5 * max(len(idle), 3) + 1))
        ax = fig.add_subplot()
        if not len(idle) or "host_wait_us" not in idle:
            _empty(ax, "no device stream")
            return fig
        labels = [f"{r.get('device', '')} stream {r.get('stream', '')}" for _, r in idle.iterrows()]
        left = np.zeros(len(idle))
        for key, label in (("host_wait_us", "host wait"), ("kernel_wait_us", "kernel wait"),
                           ("other_us", "other")):
            values = idle[key].to_numpy(dtype=float)
            ax.barh(labels, values, left=left, label=label)
            left += values
        ax.set_xlabel("idle time (us)")
        ax.set_title("Idle time by cause")
        ax.legend()
        fig.tight_layout()
        return fig

    def memory(self):
        """Allocated bytes over time per device, with each device's peak marked."""
        mem = self._trace.memory_timeline()
        fig = Figure(figsize=(9, 4))
        ax = fig.add_subplot()
        if not len(mem):
            _empty(ax, "no memory events")
            return fig
        for device, rows in mem.groupby("device", sort=False):
            y = rows["allocated"].to_numpy(dtype=float) / 2**20
            t = rows["ts_ns"].to_numpy(dtype=float) / 1e6
            ax.step(t, y, where="post", label=str(device))
            i = int(np.argmax(y))
            ax.annotate(f"peak {y[i]:.1f} MiB", (t[i], y[i]), fontsize=8)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("allocated (MiB)")
        ax.set_title("Device memory")
        ax.legend()
        fig.tight_layout()
        return fig


class JobPlots:
    def __init__(self, job):
        self._job = job

    def skew(self, top=20):
        """Mean and max skew per collective (name, size), the largest first."""
        coll = self._job.collectives()
        fig = Figure(figsize=(8, 0.4 * min(top, max(len(coll), 3)) + 1))
        ax = fig.add_subplot()
        if not len(coll) or "skew_us" not in coll:
            _empty(ax, "no collective")
            return fig
        key = coll["name"].astype(str) + " " + coll.get("bytes", 0).astype(str) + " B"
        g = coll.assign(key=key).groupby("key")["skew_us"].agg(["mean", "max"])
        g = g.sort_values("max", ascending=False).head(top)[::-1]
        ax.barh(g.index, g["max"], color="#f4a582", label="max")
        ax.barh(g.index, g["mean"], color="#ca0020", label="mean")
        ax.set_xlabel("skew (us): first to last rank entering")
        ax.set_title("Collective skew")
        ax.legend()
        fig.tight_layout()
        return fig
