"""opscope.load on AWS Neuron's profiles (docs/neuron-profiles.md): the profiler's legacy JSON
(``neuron-json``: a device profile and system_profile.json, written here from the documented
structure) and a folder holding a torch.profiler trace beside its run's Neuron Explorer profile
(``torch-neuron``: the Parquet written by tests/import/neuron/write_profile.mjs, npm's
parquet-wasm). Each gives the trace, key_averages with the Self NEURON columns, and
trace.neuron_device(); a system profile of two hosts is a Job of one rank per host."""

import json
import shutil
import subprocess

import pytest

import opscope
from conftest import FIXTURES_DIR, SOURCE_DIR

BASE = 1729888371056597613  # the run's epoch ns
LABELS = ("TensorMatrix", "Vector", "Scalar")
OPCODES = ("MATMUL", "TENSOR_TENSOR", "ACTIVATE")


def _device_profile(n, t0, nc):
    """`n` instructions over three engines, 100 ns apart, each 40 + i ns long, from device time
    `t0`, and two DMA transfers on queue qSyncIO."""
    instructions = [{"timestamp": t0 + 100 * i, "duration": 40 + i, "label": LABELS[i % 3],
                     "opcode": OPCODES[i % 3], "hlo_name": "%add.1 = add(%dot, %c)"}
                    for i in range(n)]
    instructions += [{"timestamp": t0 + 10, "duration": 200, "label": "DMA queue qSyncIO",
                      "opcode": "DMA", "bytes": 4096},
                     {"timestamp": t0 + 110, "duration": 200, "label": "DMA queue qSyncIO",
                      "opcode": "DMA", "bytes": 2048}]
    return {"summary": [{"total_time": 0.017, "nc_idx": nc}], "instruction": instructions}


def _system_profile(instances=("i-0abc",)):
    """Per host: a framework op holding nrt_execute, the execution it launched (2000 ns) and a
    collective (500 ns on the first host; the others start it 100 ns later each, ending with
    it); a host memory sample."""
    events, mem = [], []
    for k, instance in enumerate(instances):
        pid = str(701 + k)
        common = {"instance_id": instance, "process_id": pid, "thread_id": 77,
                  "group": "nrt-nc-001", "lnc_idx": "1"}
        events += [
            dict(common, duration=5000, name="PjitFunction(step)", timestamp=BASE, type=99999,
                 group="framework-77"),
            dict(common, duration=3000, id=5, parent_id=0, name="nrt_execute",
                 timestamp=BASE + 1000, type=3),
            dict(common, duration=2000, id=6, parent_id=5, name="nc_exec_running",
                 timestamp=BASE + 1500, type=20),
            dict(common, duration=500 - 100 * k, name="cc_running",
                 timestamp=BASE + 2000 + 100 * k, type=21),
        ]
        mem.append({"duration": 1, "instance_id": instance, "percent_usage": 9.5,
                    "timestamp": BASE + 100, "usage": 51805806592})
    return {"trace_events": events, "mem_usage": mem, "cpu_util": []}


def _neuron_key_averages(trace, fmt):
    """The key_averages of a trace of format `fmt`, checked to have the NEURON device columns."""
    assert isinstance(trace, opscope.Trace)
    assert trace.metadata["format"] == fmt
    averages = trace.key_averages()
    assert averages.device_name == "NEURON"
    table = averages.table(sort_by="self_privateuse1_time_total", row_limit=-1)
    assert "Self NEURON" in table and "NEURON total" in table
    return averages


def _row(frame, name):
    rows = frame[frame["name"] == name]
    assert len(rows) == 1, frame["name"].tolist()
    return rows.iloc[0]


def test_neuron_json_device_profile(tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(_device_profile(9, 777000, 1)))
    trace = opscope.load(path)
    assert isinstance(trace, opscope.Trace)
    assert trace.metadata["format"] == "neuron-json"
    slices = trace.slices()
    assert (slices.kind == "instruction").sum() == 9 + 2
    engines = trace.neuron_device()
    assert sorted(engines["engine"]) == sorted(LABELS)
    assert engines["instructions"].tolist() == [3, 3, 3]
    # By hand: the instructions i = 0, 3, 6 of each engine are 40 + i ns long and never overlap.
    tensor = _row(engines.rename(columns={"engine": "name"}), "TensorMatrix")
    assert tensor["busy_ns"] == 40 + 43 + 46
    dma = engines.attrs["dma"]
    assert dma["packets"] == 2
    assert dma["bytes"] == 4096 + 2048
    assert dma["busy_ns"] == 300  # [10, 210) and [110, 310) overlap
    assert dma["gbps"] == pytest.approx(6144 / 300)


def test_neuron_json_system_profile_key_averages(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "system_profile.json").write_text(json.dumps(_system_profile()))
    (run / "device_profile_model_42.json").write_text(json.dumps(_device_profile(9, 777000, 1)))
    trace = opscope.load(run)
    averages = _neuron_key_averages(trace, "neuron-json")
    # The framework op's device time: its execution (2000 ns) and the collective in it (500 ns).
    step = _row(averages.to_pandas(), "PjitFunction(step)")
    assert step["device_time_total_us"] == pytest.approx(2.5)
    engines = trace.neuron_device()
    assert engines["instructions"].sum() == 9
    assert engines.attrs["dma"]["bytes"] == 6144


def test_neuron_json_of_two_hosts_is_a_job(tmp_path):
    path = tmp_path / "system_profile.json"
    path.write_text(json.dumps(_system_profile(("i-0aaa", "i-0bbb"))))
    job = opscope.load(path)
    assert isinstance(job, opscope.Job)
    ranks = job.ranks()
    assert ranks["rank"].tolist() == [0, 1]
    assert ranks["part"].tolist() == ["i-0aaa", "i-0bbb"]
    collectives = job.collectives()
    assert len(collectives) == 1
    # cc_running at BASE + 2000 (i-0aaa) and BASE + 2100 (i-0bbb), both ending at BASE + 2500
    # (the clock fit finds no offset): 100 ns of skew.
    assert collectives.iloc[0]["skew_us"] == pytest.approx(0.1)
    assert opscope.load(tmp_path).ranks()["part"].tolist() == ["i-0aaa", "i-0bbb"]


def _write_profile(spec, out):
    """Writes a Neuron Explorer profile folder from a write_profile.mjs spec; skips without node."""
    here = SOURCE_DIR / "tests/import/neuron"
    if shutil.which("node") is None:
        pytest.skip("node is not installed: cannot run the Parquet writer")
    if not (here / "node_modules/parquet-wasm/package.json").exists():
        if subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=here,
                          capture_output=True).returncode != 0:
            pytest.skip(f"npm ci failed in {here}")
    spec_file = out.parent / (out.name + ".spec.json")
    spec_file.write_text(json.dumps(spec))
    reference = FIXTURES_DIR.parent / "reference/neuron-explorer-parquet-schema-7.4.0.md"
    subprocess.run(["node", str(here / "write_profile.mjs"), str(reference), str(spec_file),
                    str(out)], check=True)


def test_torch_neuron_folder(tmp_path):
    base = 1700000000000000000
    # The torch trace: aten::mul whose runtime call carries execution id 7, aten::add without ids.
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 100, "tid": 100, "ts": 10.0,
         "dur": 500.0, "args": {"External id": 1}},
        {"ph": "X", "cat": "privateuse1_runtime", "name": "nrta_execute_schedule", "pid": 100,
         "tid": 100, "ts": 20.0, "dur": 50.0,
         "args": {"External id": 1, "correlation": 11, "execution_id": 7}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 100, "tid": 100, "ts": 600.0,
         "dur": 400.0, "args": {"External id": 2}},
    ]
    (tmp_path / "trace.json").write_text(json.dumps(
        {"schemaVersion": 1, "baseTimeNanoseconds": base, "traceEvents": events}))
    # The profile: the two executions (300 us by id, 403.3 us by time), and a device profile
    # with two instructions in the first.
    rows = [("aten::mul", "framework", 10000, 510000, ["f1"], ""),
            ("nrta_execute_schedule", "neuron_rt", 20000, 70000, ["f1"], '{"execution_id": 7}'),
            ("nc_exec_running", "neuron_hw", 100000, 400000, ["f1"], ""),
            ("nrta_execute_schedule", "neuron_rt", 620000, 660000, [], ""),
            ("nc_exec_running", "neuron_hw", 700000, 1103300, [], "")]
    n = len(rows)
    system = {"tables": {
        "SystemProfileMetadata": {"columns": {"first_ts_ns": [str(base)]}},
        "SystemProfileEvents": {"columns": {
            "id": list(range(1, n + 1)), "name": [r[0] for r in rows],
            "start_ts": [r[2] for r in rows], "end_ts": [r[3] for r in rows],
            "duration_ns": [r[3] - r[2] for r in rows],
            "trace_event_source": [r[1] for r in rows], "instance_id": ["i-0abc"] * n,
            "process_id": [100] * n, "thread_id": [100] * n, "nc_idx": [0] * n,
            "flow_id": [r[4] for r in rows], "extra_attributes_json": [r[5] for r in rows]}},
        "DeviceProfileList": {"columns": {"device_profile_name": ["dev0"],
                                          "instance_id": ["i-0abc"], "process_id": [100],
                                          "nc_id": [0]}}}}
    # The device clock reads 0 at `base` (first_ts names first_hw_timestamp's epoch time): times
    # stay below 2**53, as the writer's JSON numbers are JavaScript doubles.
    device = {"tables": {
        "Metadata": {"columns": {"first_hw_timestamp": [100000],
                                 "first_ts": ["2023-11-14 22:13:20.0001 UTC"],
                                 "num_physical_cores": [1], "neuroncore_idx": [0]}},
        "Instruction": {"columns": {"start_ts": [110000, 150000], "end_ts": [150000, 170000],
                                    "engine": ["TensorMatrix", "Vector"],
                                    "opcode": ["MATMUL", "TENSOR_TENSOR"]}}}}
    _write_profile(system, tmp_path / "neuron")
    _write_profile(device, tmp_path / "neuron" / "dev0")
    for spec in tmp_path.glob("*.spec.json"):
        spec.unlink()
    (tmp_path / "neuron" / "dev0.spec.json").unlink()
    trace = opscope.load(tmp_path)
    averages = _neuron_key_averages(trace, "torch-neuron")
    frame = averages.to_pandas()
    assert _row(frame, "aten::mul")["self_device_time_total_us"] == pytest.approx(300.0)
    assert _row(frame, "aten::add")["self_device_time_total_us"] == pytest.approx(403.3)
    engines = trace.neuron_device()
    assert sorted(engines["engine"]) == ["TensorMatrix", "Vector"]
    busy = dict(zip(engines["engine"], engines["busy_ns"]))
    assert busy == {"TensorMatrix": 40000, "Vector": 20000}
