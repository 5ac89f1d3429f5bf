"""Perfetto traces from Python: the profiler's export_perfetto, read back by opscope.load to the
same tables; a converted fixture opens as the JSON it came from."""

import opscope
from opscope.profiler import ProfilerActivity, profile, record_function
from conftest import fixture_trace, run_cli


def test_export_perfetto_loads_back_to_the_same_tables(tmp_path):
    x = opscope.randn(32, 64, seed=1)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(3):
            with record_function("block"):
                y = opscope.rms_norm(x * x + 1, [64], eps=1e-6)
    pftrace = tmp_path / "trace.pftrace"
    prof.export_perfetto(pftrace)
    assert pftrace.read_bytes()[:1] == b"\x0a"  # a protobuf Trace: field 1, a packet
    loaded = opscope.load(pftrace)
    assert loaded.metadata["format"] == "perfetto"
    for sort_by in ("count", "self_cpu_time_total"):
        assert loaded.key_averages().table(sort_by=sort_by, row_limit=-1) == \
            prof.key_averages().table(sort_by=sort_by, row_limit=-1)
    json_path = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(json_path)
    assert opscope.load(json_path).key_averages().table(sort_by="count", row_limit=-1) == \
        loaded.key_averages().table(sort_by="count", row_limit=-1)
    assert y.shape == (32, 64)


def test_a_converted_fixture_opens_as_its_json(tmp_path):
    source = fixture_trace("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    out = tmp_path / "amd.pftrace"
    run_cli("convert", "--quiet", source, out)
    a, b = opscope.load(source), opscope.load(out)
    assert b.metadata["format"] == "perfetto"
    assert a.key_averages().table(sort_by="self_cuda_time_total", row_limit=-1) == \
        b.key_averages().table(sort_by="self_cuda_time_total", row_limit=-1)
    assert a.ops().equals(b.ops())
    assert a.kernels().equals(b.kernels())
