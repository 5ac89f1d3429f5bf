"""opscope with real PyTorch: a torch.profiler ``on_trace_ready`` handler.

    import torch, opscope.torch
    with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=2),
                                on_trace_ready=opscope.torch.trace_handler("profiles")) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

This module does not import torch; the handler only calls the profiler object it is given.
"""

import os
import sys

from . import _opscope


def trace_handler(dir_name, rows=10, file=None):
    """An ``on_trace_ready`` for torch.profiler (or opscope.profiler) that writes each window
    to ``<dir>/<host>_pid_<pid>/<YYYYmmdd_HHMMSS>[_N]/trace.json`` (Neuron's profile layout),
    atomically (written beside, then renamed), and prints opscope's summary of it: the
    ``opscope report`` text with ``rows`` rows per table, to ``file`` (default stdout).
    A trace opscope cannot read is still kept; the error is printed instead."""

    def handler(prof):
        from . import TraceError, load

        run_dir = _opscope.profile_run_directory(os.fspath(dir_name))
        target, n = run_dir, 1
        while os.path.exists(target):  # several windows within one second
            target = f"{run_dir}_{n}"
            n += 1
        os.makedirs(target)
        path = os.path.join(target, "trace.json")
        tmp = os.path.join(target, ".trace.json.tmp")
        prof.export_chrome_trace(tmp)
        os.replace(tmp, path)
        out = file or sys.stdout
        try:
            print(load(path).report(rows=rows), file=out)
        except TraceError as e:
            print(f"opscope: {e}", file=out)
        print(f"trace: {path}", file=out)

    return handler
