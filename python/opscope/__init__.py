"""opscope for Python: trace analysis as pandas frames, the same numbers and tables as the CLI.

    import opscope
    trace = opscope.load("rank-0.pt.trace.json.gz")     # raises opscope.TraceError
    print(trace.key_averages().table(sort_by="self_cuda_time_total", row_limit=10))
    trace.ops()            # DataFrame, columns as in `opscope report --json`
    trace.slices()         # every slice, from numpy arrays

See docs/python.md.
"""

import os

from ._errors import TraceError
from . import _opscope
from ._frames import KeyAverages, Trace, diff_frame, diff_text
from ._analyses import CheckResult, check as _check

# The tensor runtime (tensor.h): devices "cpu" and "neuron" (the simulated NeuronCore).
from ._opscope import (Tensor, TensorError, OutOfMemoryError, randn, ones, zeros, empty, full,
                       arange, tensor, add, sub, mul, div, pow, maximum, minimum, rsqrt, sqrt,
                       exp, neg, log, abs, reciprocal, relu, tanh, sigmoid, silu, gelu, mean,
                       sum, amax, amin, mm, bmm, matmul, softmax, layer_norm, rms_norm)
from ._compile import compile, CompiledFunction
from . import neuron, profiler
from ._job import Job, load_job
from ._explore import ExplorerSession, explore

__all__ = ["TraceError", "Trace", "KeyAverages", "load", "load_bytes", "diff", "diff_table", "check",
           "CheckResult",
           "Tensor", "TensorError", "OutOfMemoryError", "compile", "neuron", "profiler", "Job",
           "load_job", "explore", "ExplorerSession"]


def load(path):
    """Imports one profile into a Trace: torch.profiler / Kineto JSON (.json or .json.gz), XLA's
    XPlane (.xplane.pb), XProf's trace JSON or an Nsight Systems SQLite export, detected by
    content (docs/formats.md); a folder
    (searched recursively, e.g. Neuron's profile layout) or a list of files holding one trace
    per rank into a Job, as ``opscope report`` does. A folder with a single trace is a Trace; a
    Neuron system profile of several hosts (``instance_id``s) is a Job of one rank per host.

    Raises TraceError with the CLI's message (file, byte offset) when a single trace cannot be
    read; a job lists rank files that failed in ``Job.errors`` and is marked partial. Imports
    run without the GIL.
    """
    if isinstance(path, (list, tuple)):
        return load_job(path)
    path = os.fsdecode(os.fspath(path))  # b"/path" is the path /path, not "b'/path'"
    if os.path.isdir(path):
        files = _trace_files(path)
        if len(files) == 1 and not _opscope.trace_parts(files[0]):
            return Trace(_opscope.load(files[0]))
        return load_job([path])
    if os.path.isfile(path) and _opscope.trace_parts(path):
        return load_job([path])
    return Trace(_opscope.load(str(path)))


def _trace_files(folder):
    """The profiles under `folder`, found as the CLI's folder scan finds them (by content)."""
    try:
        return _opscope.find_traces(folder)
    except ValueError:
        return []


def load_bytes(data):
    """The same from the bytes of a trace (plain JSON or gzip)."""
    return Trace(_opscope.load_bytes(bytes(data)))


def diff(a, b, rows="ops"):
    """Compares two traces (Trace objects or paths) as ``opscope diff A B --json``: a
    DataFrame of the ops (rows="ops") or kernels (rows="kernels") added, removed or changed, by
    impact; the two device timelines, and the other rows as a DataFrame, in ``attrs``."""
    return diff_frame(_as_trace(a), _as_trace(b), rows)


def check(a, b, max_regression=5.0, metrics=(), min_steps=1, skip_steps=0, alpha=0.05, rows=20):
    """``opscope check A B`` (Traces or paths): a CheckResult with the verdict, exit_code,
    the metrics and the moved rows as DataFrames (docs/check.md)."""
    return _check(_as_trace(a), _as_trace(b), max_regression, metrics, min_steps, skip_steps,
                  alpha, rows)


def diff_table(a, b, row_limit=30):
    """The text ``opscope diff A B --rows ROW_LIMIT`` prints."""
    return diff_text(_as_trace(a), _as_trace(b), row_limit)


def _as_trace(t):
    return t if isinstance(t, Trace) else load(t)
