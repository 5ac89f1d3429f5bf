"""Long calls release the GIL: another Python thread keeps running while they work.

The call runs on a worker thread while this thread spins, noting the time of each turn. A call
that holds the GIL stops the spinning thread for its whole duration; one that releases it leaves
only short gaps. The harness itself is checked on a call known to hold the GIL (a regular
expression that backtracks exponentially: `re` never lets go of it), so the test can fail.
"""

import re
import threading
import time

import opscope


def longest_stall(call):
    """Runs call() on a worker thread; returns (result, call's duration in s, the longest time
    in s this thread did not run during the call)."""
    window = {}

    def work():
        window["start"] = time.perf_counter()
        window["result"] = call()
        window["end"] = time.perf_counter()

    ticks = []
    worker = threading.Thread(target=work)
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    start, end = window["start"], window["end"]
    inside = [start] + [t for t in ticks if start < t < end] + [end]
    stall = max(b - a for a, b in zip(inside, inside[1:]))
    return window["result"], end - start, stall


def write_trace(path, ops):
    """A Kineto trace of `ops` cpu_ops, each launching a kernel (about 300 bytes per op)."""
    parts = []
    for i in range(ops):
        ts = 1000 + 10 * i
        parts.append(
            f'{{"ph":"X","cat":"cpu_op","name":"aten::op{i % 50}","pid":1,"tid":1,"ts":{ts},'
            f'"dur":8,"args":{{"External id":{i + 1}}}}},'
            f'{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,'
            f'"ts":{ts + 1},"dur":4,"args":{{"correlation":{i + 1}}}}},'
            f'{{"ph":"X","cat":"kernel","name":"kernel{i % 50}","pid":0,"tid":7,"ts":{ts + 6},'
            f'"dur":7,"args":{{"correlation":{i + 1},"stream":7}}}}')
    path.write_text('{"traceEvents":[' + ",".join(parts) + "]}")


def test_harness_sees_a_call_that_holds_the_gil():
    _, duration, stall = longest_stall(lambda: re.match(r"(a+)+b", "a" * 22))
    assert stall > 0.5 * duration, (duration, stall)


def test_load_and_analyses_release_the_gil(tmp_path):
    path = tmp_path / "big.json"
    write_trace(path, 50_000)
    trace, duration, stall = longest_stall(lambda: opscope.load(path))
    assert len(trace) == 3 * 50_000
    assert stall < 0.5 * duration, f"load took {duration:.3f} s, this thread stalled {stall:.3f} s"

    doc, duration, stall = longest_stall(trace.report_json)
    assert doc["key_averages"]["rows"]
    assert stall < 0.5 * duration, f"report took {duration:.3f} s, this thread stalled {stall:.3f} s"
