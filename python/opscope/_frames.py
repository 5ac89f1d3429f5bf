"""Trace analysis as pandas DataFrames.

Every frame's columns are named as the keys of ``opscope report --json`` (the C++ analyses
write the JSON; this module only lays it out), so a notebook and a script reading the CLI's
JSON use the same names. Totals that are not per row are in ``DataFrame.attrs``.
"""

import json

import numpy as np
import pandas as pd

from ._analyses import AnalysesMixin

from . import _opscope


class KeyAverages:
    """Per-op aggregates of a trace, as torch.profiler's ``key_averages()``."""

    def __init__(self, impl):
        self._impl = impl

    def table(self, sort_by=None, row_limit=100):
        """The table exactly as ``opscope report`` (and torch.profiler) prints it.

        ``sort_by``: any key torch accepts (self_cpu_time_total, cpu_time_total,
        self_cuda_time_total, self_privateuse1_time_total, device_time_total, count, ...);
        None keeps insertion order. ``row_limit`` < 0 prints every row. An unknown key raises
        ValueError listing the accepted ones.
        """
        return self._impl.table(sort_by or "", row_limit)

    def to_pandas(self, sort_by=None, row_limit=-1):
        """The rows as a DataFrame, columns as in ``--json``'s ``key_averages.rows``."""
        doc = json.loads(self._impl.to_json(sort_by or "", row_limit))
        frame = pd.DataFrame(doc.get("rows", []))
        frame.attrs = {k: v for k, v in doc.items() if k != "rows"}
        return frame

    @property
    def device_name(self):
        return self._impl.device_name

    def __len__(self):
        return len(self._impl)

    def __str__(self):
        return self.table()


def _rows_frame(doc, key="rows"):
    frame = pd.DataFrame(doc.get(key, []))
    frame.attrs = {k: v for k, v in doc.items() if k != key}
    return frame


def _flatten(prefix, stats):
    return {f"{prefix}_{k}": v for k, v in stats.items()}


def launch_stats_frame(doc):
    """One row per runtime API plus an "(all)" row, as ``opscope report`` lists them; the
    duration and launch_delay statistics as ``duration_<key>`` / ``launch_delay_<key>``."""
    rows = []
    for entry in doc.get("by_name", []) + [
        {"name": "(all)", "duration": doc["duration"], "launch_delay": doc["launch_delay"]}
    ]:
        row = {"name": entry["name"]}
        row.update(_flatten("duration", entry["duration"]))
        row.update(_flatten("launch_delay", entry["launch_delay"]))
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs = {"unlinked_activities": doc.get("unlinked_activities", 0)}
    return frame


class Trace(AnalysesMixin):
    """One imported trace (``opscope.load``). Immutable; analyses run without the GIL."""

    def __init__(self, impl):
        self._impl = impl

    @property
    def metadata(self):
        """trace_name, device_type, base_time_ns, skipped_events, warnings, extra (raw JSON of
        other top-level keys such as distributedInfo), slices, input_bytes, json_bytes, and
        import_seconds: the import's wall seconds per stage (read, parse, merge, finish; with
        threads, parse counts the calling thread's share only)."""
        return self._impl.metadata()

    def __len__(self):
        return len(self._impl)

    def __repr__(self):
        md = self.metadata
        return (f"<opscope.Trace {md['path'] or md['trace_name']!r}: {md['slices']} slices, "
                f"device {md['device_type'] or 'none'}>")

    def key_averages(self, group_by_input_shape=False):
        return KeyAverages(self._impl.key_averages(group_by_input_shape))

    def report(self, sort_by=None, rows=20):
        """The text ``opscope report --sort SORT_BY --rows ROWS`` prints."""
        return self._impl.report(sort_by or "", rows)

    def report_json(self, sort_by=None, rows=20):
        """The document ``opscope report --json`` prints, parsed."""
        return json.loads(self._impl.report_json(sort_by or "", rows))

    def timeline(self):
        """TraceLens' gpu_timeline: one row, the ``device_timeline`` keys of ``--json``."""
        return pd.DataFrame([json.loads(self._impl.timeline_json())])

    def ops(self):
        """TraceLens' ops_summary: a row per op (``ops.rows`` of ``--json``)."""
        return _rows_frame(json.loads(self._impl.ops_json()))

    def kernels(self):
        """TraceLens' kernel_summary: a row per (parent op, kernel, stream)."""
        return _rows_frame(json.loads(self._impl.kernels_json()))

    def launch_stats(self):
        """Runtime call duration and launch delay per runtime API (``launches`` of ``--json``)."""
        return launch_stats_frame(json.loads(self._impl.launch_stats_json()))

    def tracks(self):
        """A row per track: pid, process_name, is_device, tid, name, kind."""
        return pd.DataFrame(self._impl.track_columns())

    def slices(self):
        """Every slice as a row, built from numpy arrays (no Python object per event).

        Columns are the trace model's (opscope::Slice): ts_ns, dur_ns (relative to
        ``metadata['base_time_ns']``), name, category, kind and input_shapes (categoricals),
        track (row of ``tracks()``, -1 for none), pid and tid (the track's; -1 without a
        track), external_id, correlation,
        parent (row index of the enclosing slice, -1 for none), depth, lane, args (handle,
        -1 for none). Rows are in the model's order: by track, then start, longer first.
        """
        cols = self._impl.slice_columns()
        tracks = self._impl.track_columns()
        track = cols["track"]
        # A slice without a track (-1) gets pid and tid -1: the last row is the sentinel.
        pid = np.asarray(tracks["pid"] + [-1], dtype=np.int64)
        tid = np.asarray(tracks["tid"] + [-1], dtype=np.int64)
        data = {}
        for key, value in cols.items():
            if isinstance(value, tuple):
                codes, categories = value
                data[key] = pd.Categorical.from_codes(codes, categories=categories)
            else:
                data[key] = value
            if key == "track":
                data["pid"] = pid[track]
                data["tid"] = tid[track]
        frame = pd.DataFrame(data, copy=False)
        frame.attrs = {"base_time_ns": self.metadata["base_time_ns"]}
        return frame


def diff_frame(a, b, rows="ops"):
    """``opscope diff A B --json``'s op rows (rows="ops") or kernel rows (rows="kernels") as a
    DataFrame; both timelines in attrs, and the other rows as a DataFrame there ("kernels" or
    "rows")."""
    doc = json.loads(_opscope.diff_json(a._impl, b._impl))
    key, other = ("kernels", "rows") if rows == "kernels" else ("rows", "kernels")
    frame = _rows_frame(doc, key)
    frame.attrs[other] = pd.DataFrame(doc.get(other, []))
    return frame


def diff_text(a, b, rows=30):
    return _opscope.diff_text(a._impl, b._impl, rows)
