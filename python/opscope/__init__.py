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

__all__ = ["TraceError", "Trace", "KeyAverages", "load", "load_bytes", "diff", "diff_table"]


def load(path):
    """Imports one torch.profiler / Kineto trace (.json or .json.gz) into a Trace.

    Raises TraceError with the CLI's message (file, byte offset) when it cannot be read. The
    import runs without the GIL.
    """
    return Trace(_opscope.load(os.fspath(path)))



def load_bytes(data):
    """The same from the bytes of a trace (plain JSON or gzip)."""
    return Trace(_opscope.load_bytes(bytes(data)))


def diff(a, b):
    """Compares two traces (Trace objects or paths) op by op, as ``opscope diff A B --json``:
    a DataFrame of the ops added, removed or changed, by impact; the two device timelines in
    ``attrs``."""
    return diff_frame(_as_trace(a), _as_trace(b))


def diff_table(a, b, row_limit=30):
    """The text ``opscope diff A B --rows ROW_LIMIT`` prints."""
    return diff_text(_as_trace(a), _as_trace(b), row_limit)


def _as_trace(t):
    return t if isinstance(t, Trace) else load(t)
