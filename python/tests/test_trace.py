"""opscope.load and the analyses: the CLI's tables and --json names, TraceError's message."""

import gzip
import json

import numpy as np
import pandas as pd
import pytest

import opscope
from conftest import fixture_trace, run_cli

AMD = "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
QWEN = "tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
FALCON = "tracelens/mi300/Falconsai_nsfw_image_detection__1016002.json.gz"


@pytest.fixture(scope="module")
def qwen():
    return opscope.load(fixture_trace(QWEN))


@pytest.mark.parametrize("sort_by,rows", [
    ("self_cuda_time_total", 10), ("cpu_time_total", 5), ("count", -1), ("self_cpu_time_total", 7)])
def test_key_averages_table_is_the_cli_text(qwen, sort_by, rows):
    table = qwen.key_averages().table(sort_by=sort_by, row_limit=rows)
    out = run_cli("report", fixture_trace(QWEN), "--sort", sort_by, "--rows", rows).stdout
    # The report is a header line, a blank line, then the key_averages table.
    header, rest = out.split("\n\n", 1)
    assert rest.startswith(table + "\n")
    assert "Name" in table.splitlines()[1]


def test_metadata_says_what_was_read_and_where_the_time_went(qwen):
    md = qwen.metadata
    path = fixture_trace(QWEN)
    assert md["input_bytes"] == path.stat().st_size
    with gzip.open(path, "rb") as f:
        assert md["json_bytes"] == len(f.read())
    assert md["slices"] == len(qwen.slices())
    stages = md["import_seconds"]
    assert sorted(stages) == ["finish", "merge", "parse", "read"]
    # Every stage ran (a one-thread import of this size parses on the calling thread).
    assert all(seconds > 0 for seconds in stages.values()), stages


def test_bad_sort_key_is_value_error(qwen):
    with pytest.raises(ValueError, match="self_cpu_time_total"):
        qwen.key_averages().table(sort_by="no_such_key")


def test_frames_have_the_json_names_and_values(qwen):
    doc = json.loads(run_cli("report", fixture_trace(QWEN), "--json", "--rows", -1,
                           "--sort", "self_cuda_time_total").stdout)
    timeline = qwen.timeline()
    assert list(timeline.columns) == list(doc["device_timeline"])
    assert timeline.iloc[0].to_dict() == doc["device_timeline"]

    ops = qwen.ops()
    assert list(ops.columns) == list(doc["ops"]["rows"][0])
    assert ops.to_dict("records") == doc["ops"]["rows"]
    assert ops.attrs["total_direct_device_ns"] == doc["ops"]["total_direct_device_ns"]

    kernels = qwen.kernels()
    assert list(kernels.columns) == list(doc["kernels"]["rows"][0])
    assert kernels.to_dict("records") == doc["kernels"]["rows"]

    launches = qwen.launch_stats()
    by_name = doc["launches"]["by_name"]
    assert list(launches["name"]) == [r["name"] for r in by_name] + ["(all)"]
    for key, value in by_name[0]["duration"].items():
        assert launches.iloc[0]["duration_" + key] == value
    assert launches.iloc[-1]["launch_delay_count"] == doc["launches"]["launch_delay"]["count"]

    ka = qwen.key_averages().to_pandas(sort_by="self_cuda_time_total")
    assert ka.to_dict("records") == doc["key_averages"]["rows"]
    assert ka.attrs["device"] == doc["key_averages"]["device"]


def test_report_is_the_cli_text(qwen):
    assert qwen.report(rows=5) == run_cli("report", fixture_trace(QWEN), "--rows", 5).stdout


def test_diff_matches_cli():
    a, b = fixture_trace(QWEN), fixture_trace(FALCON)
    frame = opscope.diff(a, b)
    doc = json.loads(run_cli("diff", a, b, "--json").stdout)
    assert frame.to_dict("records") == doc["rows"]
    assert len(frame) > 0
    assert opscope.diff_table(a, b, row_limit=12) == run_cli("diff", a, b, "--rows", 12).stdout


def test_slices_agree_with_the_json(tmp_path):
    path = fixture_trace(AMD)
    trace = opscope.load(path)
    slices = trace.slices()
    with gzip.open(path, "rt") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    assert len(slices) == len(events) == len(trace)
    # Independent of the importer: the multiset of names and the total duration (us -> ns).
    assert sorted(slices["name"].astype(str)) == sorted(e["name"] for e in events)
    total_ns = sum(round(float(e["dur"]) * 1000) for e in events)
    assert abs(int(slices["dur_ns"].sum()) - total_ns) <= len(events)
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert (slices["kind"] == "kernel").sum() == len(kernels)
    assert set(slices.columns) >= {"ts_ns", "dur_ns", "name", "category", "kind", "track", "pid",
                                   "tid", "external_id", "correlation", "parent", "depth"}
    assert slices["ts_ns"].dtype == np.int64
    assert isinstance(slices["name"].dtype, pd.CategoricalDtype)
    # Parents enclose their children.
    child = slices[slices["parent"] >= 0]
    parent = slices.iloc[child["parent"].to_numpy()]
    assert (parent["ts_ns"].to_numpy() <= child["ts_ns"].to_numpy()).all()
    assert (parent["track"].to_numpy() == child["track"].to_numpy()).all()
    tracks = trace.tracks()
    assert set(slices["pid"]) <= set(tracks["pid"])


def test_trace_error_carries_the_cli_message(tmp_path):
    text = gzip.open(fixture_trace(AMD), "rt").read()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2] + "x")
    with pytest.raises(opscope.TraceError) as info:
        opscope.load(cut)
    err = info.value
    cli = run_cli("report", cut, check=False)
    assert cli.returncode == 1
    assert cli.stderr == f"opscope report: {err}\n"
    assert err.file == str(cut)
    assert 0 < err.offset <= len(text) // 2 + 1
    assert f"byte {err.offset}" in str(err)
    assert err.code == "invalid input"
    assert err.trace is not None and len(err.trace) > 0  # what was read before the error

    with pytest.raises(opscope.TraceError) as missing:
        opscope.load(tmp_path / "absent.json")
    assert missing.value.code == "not found"
    assert str(tmp_path / "absent.json") in str(missing.value)
