"""An XSpace decoded by protoc (Debian's protobuf-compiler) against the shared xplane.proto, as
plain Python dicts: the independent reader the XPlane tests hold opscope's against.

    python3 xspace_text.py FILE.xplane.pb PROTO_DIR   # prints each plane's lines and event counts
"""

import codecs
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


if __name__ == "__main__":
    space = decode(sys.argv[1], sys.argv[2])
    for name, metadata, _, lines in planes(space):
        print(name)
        for line in lines:
            print(f"  {line_label(line)}: {len(line.get('events', []))} events")
