"""The analyses of ``opscope report --perf --memory --json`` on a Trace as DataFrames, and
``opscope check`` (the regression verdict) from Python.

Every frame's columns are the keys of the matching ``--json`` section (docs/python.md); the rest
of each section (device spec, totals, the step) is in the frame's ``attrs``.
"""

import json

import pandas as pd

from . import _opscope


def _frame(rows, attrs=None):
    frame = pd.DataFrame(rows)
    frame.attrs = dict(attrs or {})
    return frame


class AnalysesMixin:
    """Trace's methods for the performance model, idle time, critical path, memory and the
    per-device timelines (one report computed per call; pass ``device_spec`` as
    ``opscope report --perf --device-spec`` takes it)."""

    def analysis_json(self, device_spec="", step="ProfilerStep", step_instance=0):
        """The document ``opscope report --perf --memory --json --rows -1`` prints, parsed."""
        return json.loads(self._impl.analysis_json(device_spec, step, step_instance))

    def perf_model(self, device_spec=""):
        """A row per (op, input shapes) with its model: gflops, data_moved_mb, flops_per_byte,
        tflops_per_s_mean, tb_per_s_mean, bound, pct_compute_roof, pct_memory_roof... (the
        ``perf_model`` rows of ``--json``); device_spec, ops_by_category and short_kernels in
        ``attrs``."""
        doc = self.analysis_json(device_spec)
        return _frame(doc.get("perf_model", []),
                      {k: doc.get(k) for k in ("device_spec", "ops_by_category", "short_kernels")})

    def idle_breakdown(self):
        """A row per device stream: device, stream, host_wait_us, kernel_wait_us, other_us and
        their interval counts (``idle_breakdown`` of ``--json``)."""
        return _frame(self.analysis_json().get("idle_breakdown", []))

    def critical_path(self, step="ProfilerStep", step_instance=0):
        """The events on the critical path of one step (``critical_path.events``): name,
        bound_by, ts_ns, dur_ns, on_path_ns; the step, its length and breakdown in ``attrs``."""
        cp = self.analysis_json(step=step, step_instance=step_instance).get("critical_path", {})
        return _frame(cp.get("events", []), {k: v for k, v in cp.items() if k != "events"})

    def memory_timeline(self):
        """A row per allocator sample and device: device, ts_ns (from the trace's base time),
        allocated, reserved (bytes; the ``memory.devices[].samples`` of ``--json``); each
        device's peak_allocated, peak_ts_ns and holders_at_peak in ``attrs['devices']``."""
        mem = self.analysis_json().get("memory", {})
        rows, devices = [], []
        for d in mem.get("devices", []):
            for ts_ns, allocated, reserved in d.get("samples", []):
                rows.append({"device": d.get("device"), "ts_ns": ts_ns, "allocated": allocated,
                             "reserved": reserved})
            devices.append({k: v for k, v in d.items() if k != "samples"})
        frame = pd.DataFrame(rows, columns=["device", "ts_ns", "allocated", "reserved"])
        frame.attrs = {"devices": devices}
        return frame

    def device_timelines(self):
        """A row per device holding device activity: the ``device_timeline`` keys of
        ``--json`` with the device's name."""
        return _frame(json.loads(self._impl.device_timelines_json()))

    def neuron_device(self):
        """A row per (NeuronCore, engine): engine, device, instructions, busy_ns, total_ns,
        span_ns, utilization (``neuron_device.engines`` of ``opscope report --json``); the
        opcodes (a DataFrame), dma, hbm and summary_checks in ``attrs``. None when the trace has
        no Neuron engine or DMA activity."""
        doc = json.loads(self._impl.neuron_device_json())
        if doc is None:
            return None
        attrs = {k: v for k, v in doc.items() if k != "engines"}
        attrs["opcodes"] = pd.DataFrame(doc.get("opcodes", []))
        return _frame(doc.get("engines", []), attrs)

    def overview(self, columns=1000, max_tracks=48):
        """Each track's busy share per equal time column (thousandths), for timeline charts."""
        return json.loads(self._impl.overview_json(columns, max_tracks))

    @property
    def plot(self):
        """Matplotlib figures of this trace: ``timeline()``, ``roofline()``, ``idle()``,
        ``memory()`` (matplotlib is imported only here)."""
        from ._plot import TracePlots
        return TracePlots(self)


class CheckResult:
    """The outcome of ``opscope.check``: ``verdict`` ("pass", "regression", "error"),
    ``exit_code`` (0, 1, 2) as the CLI exits, ``headline``, ``noise_estimate``, ``metrics`` and
    ``moved`` as DataFrames with the keys of ``opscope check --json``, the raw document in
    ``json``."""

    def __init__(self, doc):
        self.json = doc
        self.verdict = doc["verdict"]
        self.exit_code = doc["exit_code"]
        self.headline = doc["headline"]
        self.error = doc.get("error")
        self.noise_estimate = doc.get("noise_estimate", False)
        self.metrics = pd.DataFrame(doc.get("metrics", []))
        self.moved = pd.DataFrame(doc.get("moved", []))

    def __bool__(self):
        return self.exit_code == 0

    def __repr__(self):
        return f"<opscope.CheckResult {self.headline!r}>"


def check(a, b, max_regression=5.0, metrics=(), min_steps=1, skip_steps=0, alpha=0.05, rows=20):
    """``opscope check A B`` on two Traces: the verdict and its rows (docs/check.md). A trace
    that cannot be read raises TraceError; a comparison that cannot be made (too few steps, a
    metric in neither trace) is a result with verdict "error"."""
    doc = json.loads(_opscope.check_json(a._impl, b._impl, float(max_regression), list(metrics),
                                         int(min_steps), int(skip_steps), float(alpha), int(rows)))
    return CheckResult(doc)
