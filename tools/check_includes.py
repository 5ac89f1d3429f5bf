#!/usr/bin/python3
"""Checks opscope's include graph against its layers (docs/architecture.md).

    tools/check_includes.py [--root DIR]      exit 0 when every include is allowed, 1 otherwise
    tools/check_includes.py --self-test       checks the checker on a small tree with known faults

Reads every `#include "..."` (and `#include <opscope/...>`) in src/, include/, tools/, tests/,
bench/, fuzz/ and python/src/ (the extension module, which uses public headers only), resolves it
to a file, and fails on:
  - an include that goes up the layers (a component including a public header or an internal
    header of a component to its right, or of its sibling device backend);
  - a `src/` header reached from outside its component that INTERNAL_USES does not list for that
    includer (src/<component>/ is private to the component otherwise);
  - a public header (include/opscope/) including anything but public headers;
  - a public header missing from PUBLIC_HEADERS (every public header belongs to one layer);
  - an include that resolves to no file, or spells a path through `src/` or `include/`;
  - a component above the device backends including a backend's header (they reach backends
    only through DeviceBackend in device.h, so adding a backend touches none of them).
It also reads each component's library in src/<component>/CMakeLists.txt (opscope_library DEPS)
and fails on a link to a component to its right (LINK_EXCEPTIONS lists the one sideways link), or
from a component above the backends to a backend. It also fails when docs/architecture.md does not
name a component, public header or internal use listed here.
Each failure prints as `file:line: reason`.
"""

import argparse
import fnmatch
import os
import re
import sys
import tempfile

# Components in layer order, lowest first. A component may include what belongs to components of a
# lower rank; the two device backends share a rank and do not see each other.
COMPONENTS = {
    "base": 0,
    "trace": 1,
    "profiler": 2,
    "tensor": 3,
    "device/cpu": 4,
    "device/neuron": 4,
    "compile": 5,
    "import/parquet": 6,
    "import": 7,
    "analysis": 8,
    "job": 9,
    "explorer": 10,
}
# The device backends: components to their right use them only through DeviceBackend (device.h),
# choosing one from the registry (compile() by CompileOptions::backend). Programs (tools/, tests/,
# bench/) link and register the backends they want.
BACKENDS = {"device/cpu", "device/neuron"}
TOOLS_RANK = 11  # tools/: the opscope CLI, above every component
TOP_RANK = 12    # tests/, bench/, fuzz/, python/src/: may use every public header

# Each public header and the component that implements it.
PUBLIC_HEADERS = {
    "trace.h": "trace",
    "activity.h": "trace",
    "record.h": "trace",
    "status.h": "base",
    "key_averages.h": "profiler",
    "device_config.h": "profiler",
    "profiler.h": "profiler",
    "export.h": "profiler",
    "ops.h": "tensor",
    "tensor.h": "tensor",
    "device.h": "tensor",
    "neuron.h": "device/neuron",
    "compile.h": "compile",
    "import.h": "import",
    "analysis.h": "analysis",
    "job.h": "job",
    "job_mpi.h": "job",
    "perf_analysis.h": "analysis",
    "neuron_device.h": "analysis",
    "check.h": "analysis",
    "overview.h": "analysis",
    "html_report.h": "explorer",
    "explorer.h": "explorer",
    "opscope.h": None,  # the umbrella header: everything, for users (not for src/)
}

# Internal headers used outside their own component: (header pattern, includer patterns).
# Patterns are fnmatch globs over repository-relative paths ("*" crosses "/"). An includer in
# src/ must still sit to the right of the header's component. docs/architecture.md explains each.
INTERNAL_USES = [
    # The base layer, below every component: JSON writing, escaping and scanning, saturating
    # arithmetic, huge-page arrays, the fork-join pool, the machine's free cores. Every component
    # uses it; so do the tests of what it holds.
    ("src/base/*.h", ["src/*", "tests/*"]),
    # The writer the Explorer's index answers into, timed with the index.
    ("src/base/json_writer.h", ["bench/explorer_bench.cc", "bench/analysis_bench.cc"]),
    # Args packed into arg store blocks on the importer's parse threads, linked by the trace.
    ("src/trace/packed_args.h", ["src/import/*"]),
    # The Perfetto trace format's field numbers and opscope's reserved names in it: one table for
    # the exporter and the reader.
    ("src/trace/perfetto_protos.h",
     ["src/profiler/*", "src/import/*", "tests/import/perfetto/perfetto_reader_test.cc"]),
    # Analyses that split their per-track passes over threads: ranges of whole tracks.
    ("src/trace/track_ranges.h", ["src/*"]),
    # The recorder is driven by the profiler's sessions.
    ("src/trace/recorder.h", ["src/profiler/*"]),
    ("src/trace/clock.h", ["src/profiler/*"]),
    # The "[memory]" events as key_averages reads them, shared with the memory timeline; their one
    # writer, AddMemoryEvent, also builds the memory tests' traces.
    ("src/profiler/memory_events.h",
     ["src/analysis/memory_timeline.cc", "src/explorer/memory_lanes_test.cc",
      "tests/profiler/key_averages_memory_test.cc"]),
    # The one reader of Input Dims / Input Strides text, shared by the FLOPs count and op args.
    ("src/profiler/input_shapes.h", ["src/analysis/perf/op_args.h", "fuzz/op_args_fuzz.cc"]),
    # The op-args parsers, fuzzed directly.
    ("src/analysis/perf/op_args.h", ["fuzz/op_args_fuzz.cc"]),
    # The critical path's one JSON writer, shared by the report and the Explorer's view.
    ("src/analysis/perf/critical_path_json.h", ["src/explorer/critical_path_view.cc"]),
    # The analyses' interval arithmetic and launcher rule, shared with the job analysis.
    ("src/analysis/device_activity.h", ["src/job/*"]),
    # The importer's stages, tested one by one.
    ("src/import/*.h", ["tests/import/import_test.cc", "tests/import/neuron_builder_test.cc"]),
    # The Perfetto reader fuzzed directly (past format detection), and the writer's bytes for its
    # round-trip invariant.
    ("src/import/import_input.h", ["fuzz/perfetto_fuzz.cc"]),
    # The legacy Neuron JSON reader, fuzzed on bytes past format detection.
    ("src/import/neuron/legacy_json.h", ["fuzz/neuron_json_fuzz.cc"]),
    # The Neuron import's slice arena, timed alone as the benchmark's fresh-memory baseline.
    ("src/import/neuron/track_stage.h", ["bench/neuron_bench.cc"]),
    ("src/import/perfetto/perfetto_reader.h", ["fuzz/perfetto_fuzz.cc"]),
    ("src/profiler/perfetto_writer.h", ["fuzz/perfetto_fuzz.cc"]),
    # The merge of a torch trace with a Neuron profile, fuzzed on two traces read from memory.
    ("src/import/neuron/torch_merge.h", ["fuzz/torch_merge_fuzz.cc"]),
    # The Parquet reader's internal API: its conformance test and dump, its fuzz target and
    # benchmark, and the Neuron Explorer reader (tables of Parquet files).
    ("src/import/parquet/*.h", ["tests/import/parquet/*", "fuzz/parquet_fuzz.cc",
                                "bench/parquet_bench.cc", "bench/neuron_bench.cc",
                                "src/import/neuron/*"]),
    # Helpers every test folder shares (reading a plain or gzip file).
    ("tests/common/*.h", ["tests/*"]),
    # Running the opscope binary as a child and reading its output: the CLI tests and the
    # benchmarks that time `opscope explore`.
    ("tests/common/child_process.h",
     ["tests/*", "bench/first_answer.cc", "bench/multirank_bench.cc"]),
    # The simulated NeuronCore's internals (parameters, programs, the device and its executor,
    # the instruction graph, the cost model, `opscope model`'s programs), tested directly; the
    # simulator benchmark times the model and the executor on programs built as the backend
    # builds them.
    ("src/device/neuron/*.h",
     ["tests/device/*", "tests/compile/compile_test.cc", "bench/neuron_sim_bench.cc"]),
    # The Explorer's first answer end to end, timed by its benchmark.
    ("bench/first_answer.h",
     ["bench/explorer_bench.cc", "bench/first_answer.cc", "bench/neuron_bench.cc"]),
    # Warming the page cache before each timed run (the VM pages out what a minute left cold).
    ("bench/page_cache.h", ["bench/import_bench.cc", "bench/multirank_bench.cc",
                            "bench/first_answer.cc", "bench/parquet_bench.cc",
                            "bench/perfetto_bench.cc", "bench/neuron_bench.cc"]),
    # The generated Kineto trace the import and Perfetto benchmarks time.
    ("bench/generated_trace.h", ["bench/import_bench.cc", "bench/perfetto_bench.cc",
                                 "bench/generated_trace.cc"]),
    ("bench/tiled_trace.h", ["bench/import_bench.cc", "bench/tiled_trace.cc"]),
    # Every benchmark's --help and argument errors; the shared fixtures the real-content rows time.
    ("bench/usage.h", ["bench/*"]),
    ("bench/fixtures.h", ["bench/import_bench.cc", "bench/analysis_bench.cc"]),
    # The Explorer's index and summaries (tests, benchmark).
    ("src/explorer/trace_index.h", ["tests/explorer/*", "bench/explorer_bench.cc",
                                    "bench/analysis_bench.cc"]),
    ("src/explorer/summary.h", ["tests/explorer/*"]),
    # A time range's op table is checked against the table of the range copied out.
    ("src/explorer/op_table.h", ["tests/explorer/*"]),
    # The CLI's own headers; its demo library (tools/CMakeLists.txt: opscope_demo) is also
    # linked by the demo's tests.
    ("tools/*.h", ["tools/*"]),
    ("tools/demo_*.h",
     ["tests/device/demo_rmsnorm_test.cc", "tests/compile/demo_compiled_test.cc",
      "tests/job/demo_allreduce_test.cc", "tests/job/mpi_report_test.cc",
      "tests/device/neuron_calibration_test.cc", "tests/device/profile_memory_test.cc",
      "tests/import/neuron/neuron_report_test.cc"]),
    # Fixture lookup and CSV reading for every end-to-end test that reads the shared fixtures, and
    # the loop that imports every fixture for a check.
    ("tests/analysis/test_support.h", ["tests/*"]),
    ("tests/analysis/fixture_traces.h", ["tests/*"]),
    # The extension module's own header (one Bind function per area); python/src/ otherwise
    # uses public headers only, as an out-of-tree user would.
    ("python/src/*.h", ["python/src/*"]),
]

# Links between components of the same rank, with the reason (docs/architecture.md).
LINK_EXCEPTIONS = {
    # The simulated NeuronCore computes its results with the CPU kernels, through the registry's
    # cpu backend (device.h); it includes no device/cpu header.
    ("device/neuron", "device/cpu"),
}

SCANNED_DIRS = ["src", "include", "tools", "tests", "bench", "fuzz", "python/src"]
SOURCE_EXTENSIONS = (".h", ".cc", ".inc")
# Folders that are not opscope's code (installed npm packages, a project's own build output).
SKIPPED_DIRS = {"node_modules", "build"}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<(opscope/[^>]+)>)')


def component_of(path):
    """The component a src/ path belongs to ("device/cpu"), or None."""
    if not path.startswith("src/"):
        return None
    rest = path[len("src/"):]
    for name in sorted(COMPONENTS, key=len, reverse=True):
        if rest.startswith(name + "/"):
            return name
    return None


def rank_of_includer(path):
    """(rank, component) of a file that includes; component is None outside src/."""
    comp = component_of(path)
    if comp is not None:
        return COMPONENTS[comp], comp
    if path.startswith("tools/"):
        return TOOLS_RANK, None
    return TOP_RANK, None


def sees(includer_rank, includer_comp, target_comp):
    """True when a file of includer_comp / includer_rank may depend on target_comp."""
    if includer_comp == target_comp:
        return True
    return COMPONENTS[target_comp] < includer_rank


def matches(path, patterns):
    return any(fnmatch.fnmatchcase(path, p) for p in patterns)


def resolve(root, includer, spelled):
    """The repository-relative path an include names, or None when it names no file."""
    if spelled.startswith("opscope/"):
        path = "include/" + spelled
        return path if os.path.isfile(os.path.join(root, path)) else None
    local = os.path.normpath(os.path.join(os.path.dirname(includer), spelled))
    for candidate in (local, "src/" + spelled, spelled):
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def above_backends(comp):
    """True for a component to the right of the device backends (compile, analysis, ...)."""
    return comp is not None and comp not in BACKENDS and all(
        COMPONENTS[comp] > COMPONENTS[b] for b in BACKENDS)


def check_include(root, includer, spelled):
    """The reason this include is not allowed, or None."""
    if spelled.startswith(("src/", "include/", "../")):
        return "spell src headers by component (trace/recorder.h) and public ones as opscope/x.h"
    target = resolve(root, includer, spelled)
    if target is None:
        return "names no file in the tree"
    rank, comp = rank_of_includer(includer)

    if target.startswith("include/opscope/"):
        name = target[len("include/opscope/"):]
        if name not in PUBLIC_HEADERS:
            return (f"public header {name} has no layer: add it to PUBLIC_HEADERS in "
                    "tools/check_includes.py and to docs/architecture.md")
        owner = PUBLIC_HEADERS[name]
        if includer.startswith("include/opscope/"):
            own = PUBLIC_HEADERS.get(includer[len("include/opscope/"):])
            if own is None:
                return None  # the umbrella header includes every public header
            if owner is None:
                return "a public header may not include the umbrella header"
            if not sees(COMPONENTS[own], own, owner):
                return f"goes up the layers: {own} header includes a {owner} header"
            return None
        if owner is None:
            return None if comp is None else "src/ includes the headers it needs, not opscope.h"
        if not sees(rank, comp, owner):
            return f"goes up the layers: {comp or includer.split('/')[0]} includes {owner}'s header"
        if owner in BACKENDS and above_backends(comp):
            return f"{comp} reaches the {owner} backend: use DeviceBackend (opscope/device.h)"
        return None

    if includer.startswith("include/"):
        return "a public header may include only public headers"
    target_comp = component_of(target)
    if target_comp is not None and target_comp == comp:
        return None  # a component's own internals
    if target_comp in BACKENDS and above_backends(comp):
        return f"{comp} reaches the {target_comp} backend: use DeviceBackend (opscope/device.h)"
    if target.startswith("tests/") and includer.startswith("tests/") and (
            os.path.dirname(target) == os.path.dirname(includer)):
        return None  # a test folder's own helpers
    for header, includers in INTERNAL_USES:
        if fnmatch.fnmatchcase(target, header) and matches(includer, includers):
            if target_comp is not None and not sees(rank, comp, target_comp):
                return f"goes up the layers: {comp} includes {target_comp}'s internal {target}"
            return None
    where = f"{target_comp}'s internal header" if target_comp else "an internal header"
    return (f"reaches {where} {target}: use a public header, or list the use in INTERNAL_USES "
            "(tools/check_includes.py) and docs/architecture.md")


def source_files(root):
    for top in SCANNED_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXTENSIONS):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def check_tree(root):
    """(problems, files, includes) for the tree at root; problems are printable lines."""
    problems = []
    files = includes = 0
    for path in source_files(root):
        files += 1
        public = path.startswith("include/opscope/")
        if public and path[len("include/opscope/"):] not in PUBLIC_HEADERS:
            problems.append(f"{path}:1: public header has no layer: add it to PUBLIC_HEADERS in "
                            "tools/check_includes.py and to docs/architecture.md")
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                includes += 1
                spelled = m.group(1) or m.group(2)
                reason = check_include(root, path, spelled)
                if reason:
                    problems.append(f'{path}:{number}: #include "{spelled}": {reason}')
    return problems + check_links(root) + check_doc(root), files, includes


def check_doc(root):
    """Problems with docs/architecture.md: every component, public header and internal use the
    checker knows must be named there (in backquotes), so the doc and the rules move together."""
    path = "docs/architecture.md"
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        return [f"{path}:1: missing: it documents the layers this checker enforces"]
    with open(full, encoding="utf-8") as f:
        text = f.read()
    names = [f"src/{c}" for c in COMPONENTS] + [h for h in PUBLIC_HEADERS]
    names += [h[len("src/"):] if h.startswith("src/") else h for h, _ in INTERNAL_USES]
    return [f"{path}:1: does not name `{n}` (tools/check_includes.py knows it)"
            for n in names if f"`{n}`" not in text]


LIBRARY_RE = re.compile(r"opscope_library\s*\((.*?)\)", re.S)
SET_RE = re.compile(r"set\s*\(\s*(\w+)\s+([^)]*)\)", re.S)


def check_links(root):
    """Problems with the link dependencies of each component's library."""
    problems = []
    for comp in COMPONENTS:
        path = f"src/{comp}/CMakeLists.txt"
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        with open(full, encoding="utf-8") as f:
            text = f.read()
        variables = {m.group(1): m.group(2) for m in SET_RE.finditer(text)}
        for m in LIBRARY_RE.finditer(text):
            body = re.sub(r"#[^\n]*", "", m.group(1))
            line = text.count("\n", 0, m.start()) + 1
            deps = body.split("DEPS", 1)[1] if "DEPS" in body else ""
            deps = re.sub(r"\$\{(\w+)\}", lambda v: variables.get(v.group(1), ""), deps)
            for dep in re.findall(r"\bopscope_(\w+)", deps):
                target = next((c for c in COMPONENTS if c.replace("/", "_") == dep), None)
                if target is None or target == comp or (comp, target) in LINK_EXCEPTIONS:
                    continue
                if not sees(COMPONENTS[comp], comp, target):
                    problems.append(f"{path}:{line}: opscope_{comp.replace('/', '_')} links "
                                    f"opscope_{dep}: goes up the layers")
                elif target in BACKENDS and above_backends(comp):
                    problems.append(f"{path}:{line}: opscope_{comp.replace('/', '_')} links the "
                                    f"backend opscope_{dep}: use DeviceBackend (opscope/device.h)")
    return problems


def self_test():
    """Builds a small tree with one fault of each kind (and allowed includes), checks the report."""
    files = {
        "include/opscope/trace.h": "",
        "include/opscope/record.h": '#include "opscope/trace.h"\n',
        "include/opscope/profiler.h": '#include "opscope/record.h"\n',
        "include/opscope/tensor.h": '#include "opscope/profiler.h"\n',
        "include/opscope/opscope.h": '#include "opscope/tensor.h"\n',
        "include/opscope/mystery.h": "",
        # Faults, one per line number 1..n below.
        "src/trace/recorder.cc": '#include "opscope/profiler.h"\n#include "trace/recorder.h"\n',
        "src/trace/recorder.h": '#include "opscope/record.h"\n',
        "src/trace/thread_buffer.h": "",
        "src/base/json_writer.h": "",
        "src/profiler/profiler.cc": ('#include "trace/thread_buffer.h"\n'
                                     '#include "trace/recorder.h"\n'
                                     '#include "base/json_writer.h"\n'
                                     '#include "opscope/tensor.h"\n'),
        "src/device/cpu/cpu.cc": '#include "device/neuron/neuron_internal.h"\n',
        "src/device/neuron/neuron_internal.h": "",
        "src/tensor/tensor.cc": ('#include "opscope/opscope.h"\n'
                                 '#include "src/trace/recorder.h"\n'
                                 '#include "tensor/missing.h"\n'),
        "include/opscope/bad_public.h": '#include "trace/recorder.h"\n',
        "tests/x/x_test.cc": ('#include "opscope/opscope.h"\n'
                              '#include "trace/thread_buffer.h"\n'
                              '#include "helper.h"\n'
                              '#include "base/json_writer.h"\n'),
        "tests/x/helper.h": "",
        "tools/main.cc": '#include "opscope/tensor.h"\n#include "tools/commands.h"\n',
        "tools/commands.h": "",
        "python/src/bindings.h": '#include "opscope/status.h"\n',
        "python/src/trace_bindings.cc": ('#include "opscope/opscope.h"\n'
                                         '#include "python/src/bindings.h"\n'
                                         '#include "base/json_writer.h"\n'
                                         '#include "tools/commands.h"\n'),
        "include/opscope/status.h": "",
        "src/tensor/CMakeLists.txt": ("set(DEPS_ opscope_trace opscope_compile)\n"
                                      "opscope_library(NAME opscope_tensor SOURCES t.cc\n"
                                      "  DEPS ${DEPS_} fmt::fmt)\n"),
        "src/device/neuron/CMakeLists.txt": ("opscope_library(NAME opscope_device_neuron\n"
                                             "  DEPS opscope_device_cpu opscope_tensor)\n"),
        "include/opscope/neuron.h": "",
        "src/compile/runtime.cc": ('#include "opscope/neuron.h"\n'
                                   '#include "device/neuron/neuron_internal.h"\n'),
        "src/compile/CMakeLists.txt": ("opscope_library(NAME opscope_compile\n"
                                       "  DEPS opscope_tensor opscope_device_neuron)\n"),
    }
    expected = {
        "include/opscope/mystery.h:1": "no layer",
        "include/opscope/bad_public.h:1": "only public headers",
        "src/trace/recorder.cc:1": "goes up the layers",
        "src/profiler/profiler.cc:1": "trace's internal header src/trace/thread_buffer.h",
        "src/profiler/profiler.cc:4": "goes up the layers",
        "src/device/cpu/cpu.cc:1": "device/neuron's internal header",
        "src/tensor/tensor.cc:1": "not opscope.h",
        "src/tensor/tensor.cc:2": "spell src headers by component",
        "src/tensor/tensor.cc:3": "names no file",
        "tests/x/x_test.cc:2": "trace's internal header",
        "python/src/trace_bindings.cc:3": "base's internal header",
        "python/src/trace_bindings.cc:4": "an internal header tools/commands.h",
        "src/tensor/CMakeLists.txt:2": "links opscope_compile",
        "src/compile/runtime.cc:1": "reaches the device/neuron backend",
        "src/compile/runtime.cc:2": "reaches the device/neuron backend",
        "src/compile/CMakeLists.txt:1": "links the backend opscope_device_neuron",
    }
    # A doc naming everything the checker knows but record.h.
    known = [f"src/{c}" for c in COMPONENTS] + list(PUBLIC_HEADERS)
    known += [h[len("src/"):] if h.startswith("src/") else h for h, _ in INTERNAL_USES]
    files["docs/architecture.md"] = " ".join(f"`{n}`" for n in known if n != "record.h")
    expected["docs/architecture.md:1"] = "does not name `record.h`"
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        problems, _, _ = check_tree(root)
    found = {}
    for p in problems:
        where = ":".join(p.split(":")[:2])
        found.setdefault(where, []).append(p)
    ok = True
    for where, words in expected.items():
        if not any(words in p for p in found.get(where, [])):
            print(f"self-test: expected a problem at {where} mentioning '{words}'; got "
                  f"{found.get(where)}")
            ok = False
    for where in found:
        if where not in expected:
            print(f"self-test: unexpected problem {found[where]}")
            ok = False
    print(f"check_includes self-test: {'passed' if ok else 'FAILED'} "
          f"({len(expected)} faults planted, {len(problems)} reported)")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.dirname(here),
                        help="the repository (default: the folder above tools/)")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    problems, files, includes = check_tree(args.root)
    for p in problems:
        print(p)
    print(f"check_includes: {files} files, {includes} includes, {len(problems)} not allowed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
