"""opscope.torch.trace_handler as torch.profiler's on_trace_ready, with Debian's PyTorch."""

import io
import json
import os
import socket

import pytest

import opscope
import opscope.torch

torch = pytest.importorskip("torch")


def test_trace_handler_writes_the_layout_and_prints_the_summary(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    out = io.StringIO()
    handler = opscope.torch.trace_handler(tmp_path, rows=5, file=out)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=torch.profiler.schedule(wait=1, warmup=1, active=2),
                                on_trace_ready=handler) as prof:
        for _ in range(4):
            loss = model(torch.randn(8, 16)).sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
            prof.step()
    runs = list(tmp_path.iterdir())
    assert [r.name for r in runs] == [f"{socket.gethostname()}_pid_{os.getpid()}"]
    windows = list(runs[0].iterdir())
    assert len(windows) == 1 and len(windows[0].name) >= 15  # YYYYmmdd_HHMMSS
    path = windows[0] / "trace.json"
    assert sorted(p.name for p in windows[0].iterdir()) == ["trace.json"]  # no temp file left
    with open(path) as f:
        doc = json.load(f)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    complete = [e for e in events if e.get("ph") == "X"]
    trace = opscope.load(path)
    assert len(trace) == len(complete) > 0
    text = out.getvalue()
    assert text.startswith(trace.report(rows=5)) and f"trace: {path}" in text
