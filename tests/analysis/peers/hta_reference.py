#!/usr/bin/python3
"""HTA's own answers for one trace, as JSON: the idle-time breakdown per stream
(get_idle_time_breakdown with its interval statistics, at two consecutive_kernel_delay values) and
the critical path of chosen steps (critical_path_analysis: graph size, path length, time by
bound_by, and the path's edges).

Run with Debian's python3 and HTA's source on PYTHONPATH, timestamps as written:
  HTA_DISABLE_NS_ROUNDING=1 PYTHONPATH=../shared/peers/hta /usr/bin/python3 \
      tests/analysis/peers/hta_reference.py TRACE OUT.json [--step NAME:HOST_INSTANCE ...]

HTA's step filter is off (see below). HOST_INSTANCE counts the host slices whose name contains NAME by start time (opscope's
--step-instance); HTA counts every event with the name in file order, GPU-side copies of a
ProfilerStep annotation included, so the matching HTA instance is looked up here.
tests/analysis/peers/make_references.sh runs this on every trace the tests use.
"""
import argparse
import json
import logging
import math
import os
import shutil
import sys
import tempfile

logging.disable(logging.WARNING)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rebase import rebase  # noqa: E402
from hta.analyzers.critical_path_analysis import CriticalPathAnalysis  # noqa: E402
from hta.common.trace import Trace  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402

# HTA's TraceAnalysis keeps, in a trace of two or more ProfilerSteps, only the host events that
# start before the last step and the device events they launched. opscope analyses every event:
# the references are HTA's analyses on every event too.
Trace._filter_irrelevant_gpu_kernels = lambda self, *args, **kwargs: None

DELAYS_US = (30, 5)  # HTA's default consecutive_kernel_delay and one more


def load(path):
    folder = tempfile.mkdtemp(prefix="hta_ref_")
    # Timestamps moved near 0 (exactly, by whole microseconds): HTA's float64 microseconds hold
    # only quarter microseconds at epoch magnitudes.
    rebase(path, os.path.join(folder, "rank-0.json.gz"))
    analysis = TraceAnalysis(trace_dir=folder)
    shutil.rmtree(folder)
    return analysis


def idle_breakdown(analysis, delay):
    df, stats = analysis.get_idle_time_breakdown(
        visualize=False, show_idle_interval_stats=True, consecutive_kernel_delay=delay)
    out = {}
    for row in df.itertuples():
        s = out.setdefault(str(int(row.stream)), {})
        s[row.idle_category] = {"us": float(row.idle_time), "intervals": 0}
    for (category, row) in stats.iterrows():
        s = out.setdefault(str(int(row["stream"])), {})
        name = {1: "host_wait", 2: "kernel_wait", 0: "other"}.get(category, str(category))
        entry = s.setdefault(name, {"us": 0.0, "intervals": 0})
        entry["intervals"] = int(row["count"])
    return out


def hta_instance(trace_df, symbols, name, host_instance):
    """The position, in HTA's list of events named like `name`, of the host_instance-th host one
    by start time."""
    ids = [v for k, v in symbols.get_sym_id_map().items() if name in k]
    rows = trace_df[trace_df.name.isin(ids)]
    gpu_annotation = symbols.get_sym_id_map().get("gpu_user_annotation", -1)
    host = rows[rows.stream.eq(-1) & rows.cat.ne(gpu_annotation)].sort_values("ts", kind="stable")
    if host_instance >= len(host):
        return None
    wanted = host.index[host_instance]
    return list(rows.index).index(wanted)


def critical_path(analysis, name, host_instance):
    t = analysis.t
    rank = list(t.traces.keys())[0]
    df = t.get_trace(rank)
    instance = hta_instance(df, t.symbol_table, name, host_instance)
    if instance is None:
        return None
    graph, ok = CriticalPathAnalysis.critical_path_analysis(t, rank, name, instance)
    out = {"step": name, "host_instance": host_instance, "hta_instance": instance, "ok": bool(ok),
           "nodes": len(graph.node_list), "edges": graph.number_of_edges()}
    if not ok:
        return out
    sym = t.symbol_table.sym_table
    trace_df = graph.trace_df

    def node(n):
        cp = graph.node_list[n]
        return [sym[int(trace_df.name.loc[cp.ev_idx])], float(cp.ts), bool(cp.is_start)]

    path = []
    length = 0.0
    nodes = graph.critical_path_nodes
    for u, v in zip(nodes, nodes[1:]):
        e = graph.edges[u, v]
        w = float(e["weight"])
        length += w
        path.append(node(u) + node(v) + [e["object"].type.value, w])
    out["length_us"] = length
    out["path_edges"] = len(path)
    by_type = {}
    for edge in path:
        entry = by_type.setdefault(edge[6], {"edges": 0, "us": 0.0})
        entry["edges"] += 1
        entry["us"] += edge[7]
    out["path_by_type"] = by_type
    breakdown = graph.get_critical_path_breakdown()
    out["bound_by_us"] = {
        str(k): float(v) for k, v in breakdown.groupby("bound_by").duration.sum().items() if k}
    if os.environ.get("HTA_REFERENCE_PATHS"):  # every edge, for debugging (large)
        out["path"] = path
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("out")
    p.add_argument("--step", action="append", default=[], help="NAME:HOST_INSTANCE")
    a = p.parse_args()
    analysis = load(a.trace)
    if not analysis.t.traces:
        sys.exit(f"HTA read no events from {a.trace}")
    result = {"trace": os.path.basename(a.trace), "idle": {}, "critical_path": []}
    for delay in DELAYS_US:
        try:
            result["idle"][str(delay)] = idle_breakdown(analysis, delay)
        except (KeyError, ValueError) as e:  # HTA fails on a trace without device streams
            result["idle"][str(delay)] = {"error": f"{type(e).__name__}: {e}"}
    for step in a.step:
        name, _, instance = step.rpartition(":")
        try:
            cp = critical_path(analysis, name, int(instance))
        except AssertionError as e:  # HTA needs device activity (its queue lengths)
            cp = {"step": name, "host_instance": int(instance), "ok": False,
                  "error": f"HTA failed: {e}"}
        if cp is not None:
            result["critical_path"].append(cp)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1, allow_nan=False)
        f.write("\n")


if __name__ == "__main__":
    main()
