"""An XSpace decoded by protoc (Debian's protobuf-compiler) against the shared xplane.proto, as
plain Python dicts: the independent reader the XPlane tests hold opscope's against.

    python3 xspace_text.py FILE.xplane.pb PROTO_DIR   # each plane's lines: events, time, stats
"""

import codecs
import json
import subprocess
import sys


def decode(path, proto_dir):
    """protoc --decode=tensorflow.profiler.XSpace's text for the file at `path`, parsed."""
    with open(path, "rb") as f:
        text = subprocess.run(
            ["protoc", f"--proto_path={proto_dir}", "--decode=tensorflow.profiler.XSpace",
             "xplane.proto"], stdin=f, capture_output=True, check=True).stdout
    return parse(text)


def _value(token):
    if token.startswith(b'"'):
        return codecs.escape_decode(token[1:-1])[0].decode("utf-8", "replace")
    try:
        return int(token)
    except ValueError:
        return float(token)


def parse(text):
    """Protobuf text format (as protoc writes it: one field per line) into nested dicts of lists."""
    root = {}
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.endswith(b"{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip().decode(), []).append(child)
            stack.append(child)
        elif line == b"}":
            stack.pop()
        else:
            key, token = line.split(b":", 1)
            stack[-1].setdefault(key.decode(), []).append(_value(token.strip()))
    return root


def one(message, key, default=None):
    values = message.get(key)
    return values[0] if values else default


def planes(space):
    """Each plane as (name, metadata by id, stat names by id, lines)."""
    for plane in space.get("planes", []):
        metadata = {one(e, "key", 0): one(e, "value", {}) for e in plane.get("event_metadata", [])}
        stat_names = {one(e, "key", 0): one(one(e, "value", {}), "name", "")
                      for e in plane.get("stat_metadata", [])}
        yield one(plane, "name", ""), metadata, stat_names, plane.get("lines", [])


def event_name(metadata, event):
    """The trace viewer's name: the metadata's display name, else its name."""
    md = metadata.get(one(event, "metadata_id", 0), {})
    return one(md, "display_name") or one(md, "name", "")


def line_label(line):
    return one(line, "display_name") or one(line, "name", "")


def _round_ps(ps):
    """ps to the nearest ns, half up (floor((ps + 500) / 1000))."""
    return (ps + 500) // 1000


def summary(space):
    """Per plane and line: timed events, the sum of their durations with each end rounded to the
    nearest ns, and how many carry each of the stats the reader uses."""
    out = []
    for name, metadata, stat_names, lines in planes(space):
        plane = {"plane": name, "lines": []}
        for line in lines:
            timed = [e for e in line.get("events", []) if "offset_ps" in e]
            total_ns = sum(_round_ps(one(e, "offset_ps", 0) + one(e, "duration_ps", 0)) -
                           _round_ps(one(e, "offset_ps", 0)) for e in timed)
            with_stat = {}
            for e in timed:
                stats = e.get("stats", []) + metadata.get(one(e, "metadata_id", 0), {}).get("stats", [])
                for stat in {stat_names.get(one(s, "metadata_id", 0), "") for s in stats}:
                    with_stat[stat] = with_stat.get(stat, 0) + 1
            plane["lines"].append({
                "line": line_label(line), "id": one(line, "id", 0), "events": len(timed),
                "total_ns": total_ns,
                "with_stat": {k: with_stat.get(k, 0) for k in (
                    "correlation_id", "memcpy_details", "Memset_details", "kernel_details",
                    "hlo_op")}})
        out.append(plane)
    return out


def xprof_json(space):
    """The XSpace as XProf's trace viewer JSON (trace_events_to_json): displayTimeUnit "ns", a pid
    per plane named by process_name metadata, a tid per line named by thread_name, complete events
    whose ts and dur are picoseconds / 1e6 written with %.17g, stats as args."""
    out = []
    for pid, (plane, metadata, stat_names, lines) in enumerate(planes(space), start=1):
        out.append(json.dumps({"ph": "M", "pid": pid, "name": "process_name",
                               "args": {"name": plane}}))
        for line in lines:
            tid = one(line, "id", 0)
            out.append(json.dumps({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                                   "args": {"name": line_label(line)}}))
            start_ps = one(line, "timestamp_ns", 0) * 1000
            for event in line.get("events", []):
                if "offset_ps" not in event:
                    continue
                args = {}
                for stat in event.get("stats", []):
                    value = next((stat[k][0] for k in ("str_value", "int64_value", "uint64_value",
                                                       "double_value") if k in stat), None)
                    if value is not None:
                        args[stat_names.get(one(stat, "metadata_id", 0), "")] = value
                ts = (start_ps + one(event, "offset_ps", 0)) / 1e6
                dur = max(one(event, "duration_ps", 0), 1) / 1e6
                out.append('{"pid": %d, "tid": %d, "name": %s, "ts": %.17g, "dur": %.17g, '
                           '"ph": "X", "args": %s}' % (pid, tid, json.dumps(event_name(metadata, event)),
                                                       ts, dur, json.dumps(args)))
    return ('{"displayTimeUnit": "ns", "metadata": {"highres-ticks": true}, "traceEvents": [\n' +
            ",\n".join(out) + "\n]}")


if __name__ == "__main__":
    # FILE PROTO_DIR: the summary as JSON (what the XPlane tests compare opscope's import with);
    # FILE PROTO_DIR --xprof-json: the file as XProf's trace viewer JSON.
    space = decode(sys.argv[1], sys.argv[2])
    if sys.argv[3:] == ["--xprof-json"]:
        sys.stdout.write(xprof_json(space))
    else:
        json.dump(summary(space), sys.stdout, indent=1)
    sys.stdout.write("\n")
