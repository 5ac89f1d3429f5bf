#!/usr/bin/python3
"""Turns Perfetto's TrackEvent conformance cases into binary traces and expected results.

    extract_cases.py --tests TESTS_PY --proto PERFETTO_TRACE_PROTO --protoc PROTOC --out DIR

Reads Perfetto's diff tests (tests.py, parsed with `ast`, never imported) and, for each test,
writes into DIR:
  NAME.pftrace   the test's trace (an inline TextProto or a .textproto beside tests.py), encoded
                 by `protoc --encode=perfetto.protos.Trace` against perfetto_trace.proto;
  NAME.sql       the test's query;
  NAME.csv       the expected output (an inline Csv, or the .out file it names);
and one line per test in DIR/cases.tsv: NAME, then `ok` (with the TrackEvent extensions dropped
because perfetto_trace.proto does not define them: Perfetto's test-only protos do), or
`unavailable` with the reason (a trace built by a Python script or a data file this checkout does
not hold, a trace modifier, or protoc refused it).
Exits 0 when every available case was written, 1 otherwise.
"""

import argparse
import ast
import os
import subprocess
import sys


def call_name(node):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def first_string(node):
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        return node.args[0].value
    return None


def blueprints(tree):
    """(test name, {keyword: node}) for each test returning a DiffTestBlueprint."""
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test_"):
                continue
            for stmt in ast.walk(fn):
                if isinstance(stmt, ast.Return) and call_name(stmt.value) == "DiffTestBlueprint":
                    yield fn.name[len("test_"):], {k.arg: k.value for k in stmt.value.keywords}


def strip_extension(text, name):
    """`text` without the fields of extension `name` ("[name]: value" or "[name] { ... }")."""
    out, i, tag = [], 0, "[" + name + "]"
    while True:
        j = text.find(tag, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = j + len(tag)
        while k < len(text) and text[k] in " \t\n:":
            k += 1
        if k < len(text) and text[k] == "{":
            depth = 0
            while k < len(text):
                depth += {"{": 1, "}": -1}.get(text[k], 0)
                k += 1
                if depth == 0:
                    break
        elif k < len(text) and text[k] == '"':
            k = text.index('"', k + 1) + 1
            while text[k:].lstrip().startswith('"'):  # adjacent string literals
                k = text.index('"', text.index('"', k) + 1) + 1
        else:
            while k < len(text) and text[k] not in "\n":
                k += 1
        i = k


def encode(protoc, proto, text):
    """(binary trace, dropped extensions, error): extensions perfetto_trace.proto lacks (Perfetto's
    test-only protos define them) are dropped, and said so."""
    proto_dir, proto_file = os.path.split(os.path.abspath(proto))
    dropped = []
    while True:
        result = subprocess.run(
            [protoc, "--encode=perfetto.protos.Trace", "-I", proto_dir, proto_file],
            input=text.encode("utf-8"), capture_output=True, check=False)
        if result.returncode == 0:
            return result.stdout, dropped, ""
        error = result.stderr.decode().strip()
        marker = 'Extension "'
        if marker not in error:
            return None, dropped, error
        name = error.split(marker, 1)[1].split('"', 1)[0]
        if name in dropped:
            return None, dropped, error
        dropped.append(name)
        text = strip_extension(text, name)


def dedent_csv(text):
    return "\n".join(line.strip() for line in text.strip().splitlines()) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tests", required=True)
    parser.add_argument("--proto", required=True)
    parser.add_argument("--protoc", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    here = os.path.dirname(os.path.abspath(args.tests))
    os.makedirs(args.out, exist_ok=True)
    with open(args.tests, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    index = []
    failed = 0
    for name, kw in blueprints(tree):
        trace, out = kw.get("trace"), kw.get("out")
        kind, value = call_name(trace), first_string(trace)
        if kind == "TextProto":
            text = value
        elif kind == "Path" and value.endswith(".textproto"):
            with open(os.path.join(here, value), encoding="utf-8") as f:
                text = f.read()
        else:
            index.append((name, "unavailable", f"its trace is {kind}('{value}'), not a textproto"))
            continue
        if "trace_modifier" in kw:
            index.append((name, "unavailable", "it injects machine_id into the trace"))
            continue
        binary, dropped, error = encode(args.protoc, args.proto, text)
        if binary is None:
            index.append((name, "unavailable", "protoc: " + " ".join(error.split())))
            failed += 1
            continue
        with open(os.path.join(args.out, name + ".pftrace"), "wb") as f:
            f.write(binary)
        with open(os.path.join(args.out, name + ".sql"), "w", encoding="utf-8") as f:
            f.write(kw["query"].value if isinstance(kw.get("query"), ast.Constant) else "")
        if call_name(out) == "Csv":
            expected = dedent_csv(first_string(out))
        else:
            with open(os.path.join(here, first_string(out)), encoding="utf-8") as f:
                expected = f.read()
        with open(os.path.join(args.out, name + ".csv"), "w", encoding="utf-8") as f:
            f.write(expected)
        index.append((name, "ok", "extensions dropped: " + ", ".join(dropped) if dropped else ""))
    with open(os.path.join(args.out, "cases.tsv"), "w", encoding="utf-8") as f:
        for row in index:
            f.write("\t".join(row) + "\n")
    print(f"{sum(1 for r in index if r[1] == 'ok')} cases encoded, "
          f"{sum(1 for r in index if r[1] != 'ok')} unavailable, into {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
