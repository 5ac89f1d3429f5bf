"""TraceLens's JAX gpu_timeline per device, computed by TraceLens's own functions on the events of an
XPlane decoded by protoc: the reference opscope's device timelines are held against.

TraceLens's JAX report (generate_perf_report_jax) reads an .xplane.pb through xprof's converter
(XPlane -> trace viewer JSON), which is not packaged for Debian. This script stands in for that one
step and applies TraceLens's code to the result unchanged:

  1. protoc --decode=tensorflow.profiler.XSpace against the shared xplane.proto (xspace_text.py);
  2. each event as the trace viewer writes it: pid per plane with process_name the plane's name,
     tid per line with thread_name the line's display name (else its name), name the event
     metadata's display name (else its name), ts and dur; times are integer picoseconds after the
     earliest line start instead of xprof's float microseconds, so TraceLens's interval arithmetic
     runs exactly (it is plain + and - on whatever numbers it is given);
  3. TraceLens's JaxGPUEventAnalyser with JaxAnalyses.default_gpu_event_filter ("Stream #" threads
     of "/device:GPU" processes), comput_metrics_multigpu: what JaxTreePerfAnalyzer's
     get_df_gpu_timeline tabulates, per GPU.

Run (Debian's python3 and pandas; TraceLens from the shared peers folder):

  PYTHONPATH=../shared/peers/tracelens /usr/bin/python3 \\
      tests/import/xplane/tracelens_jax_timeline.py ../shared/fixtures/traces/xplane \\
      ../shared/reference/xplane > tests/import/xplane/tracelens_gpu_timeline.json

Output: {trace file (relative to the fixtures folder given): {plane name: {TraceLens metric: ps}}}.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xspace_text  # noqa: E402

from TraceLens.TreePerf.gpu_event_analyser import JaxGPUEventAnalyser  # noqa: E402
from TraceLens.TreePerf.jax_analyses import JaxAnalyses  # noqa: E402


def trace_viewer_events(space):
    """The XSpace's timed events as the trace viewer lists them, times in ps."""
    lines = [line for _, _, _, ls in xspace_text.planes(space) for line in ls]
    base_ns = min((xspace_text.one(l, "timestamp_ns", 0) for l in lines), default=0)
    events = []
    for pid, (plane, metadata, _, plane_lines) in enumerate(xspace_text.planes(space), start=1):
        for line in plane_lines:
            start_ps = (xspace_text.one(line, "timestamp_ns", 0) - base_ns) * 1000
            thread = xspace_text.line_label(line)
            for event in line.get("events", []):
                if "offset_ps" not in event:
                    continue  # an aggregate: no time
                events.append({
                    "ph": "X",
                    "pid": pid,
                    "tid": xspace_text.one(line, "id", 0),
                    "name": xspace_text.event_name(metadata, event),
                    "ts": start_ps + xspace_text.one(event, "offset_ps", 0),
                    "dur": xspace_text.one(event, "duration_ps", 0),
                    "process": {"process_name": plane},
                    "thread": {"thread_name": thread},
                })
    return events


def gpu_timelines(path, proto_dir):
    events = trace_viewer_events(xspace_text.decode(path, proto_dir))
    plane_of = {e["pid"]: e["process"]["process_name"] for e in events}
    analyser = JaxGPUEventAnalyser(events)
    metrics = analyser.comput_metrics_multigpu(event_filter=JaxAnalyses.default_gpu_event_filter)
    return {plane_of[pid]: {k: int(v) for k, v in m.items()} for pid, m in sorted(metrics.items())}


def main(fixtures, proto_dir):
    out = {}
    for dirpath, _, files in sorted(os.walk(fixtures)):
        for name in sorted(files):
            if not name.endswith(".xplane.pb"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, fixtures)
            try:
                out[rel] = gpu_timelines(path, proto_dir)
            except Exception as e:  # a file protoc cannot decode has no reference
                out[rel] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
