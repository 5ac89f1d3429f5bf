"""Tensors, the profiler and compile() from Python, against numpy and the CLI's demo."""

import json
import re
import runpy

import numpy as np
import pytest

import opscope
from opscope.profiler import (NeuronConfig, ProfileMode, ProfilerActivity, profile,
                              record_function, schedule)
from conftest import SOURCE_DIR, run_cli


def rms_reference(x, w, eps):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w


def test_tensor_math_matches_numpy():
    x = opscope.randn(4, 8, seed=3)
    w = opscope.randn(8, seed=4)
    xn, wn = x.numpy(), w.numpy()
    assert x.shape == (4, 8) and x.device == "cpu" and x.dtype == "float"
    naive = x * opscope.rsqrt(opscope.mean(x * x, dim=-1, keepdim=True) + 1e-6) * w
    np.testing.assert_allclose(naive.numpy(), rms_reference(xn, wn, 1e-6), rtol=1e-5, atol=1e-6)
    fused = opscope.rms_norm(x, [8], weight=w, eps=1e-6)
    np.testing.assert_allclose(fused.numpy(), rms_reference(xn, wn, 1e-6), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose((2 - x).numpy(), 2 - xn, rtol=1e-6)
    np.testing.assert_allclose((1 / (x * x + 1)).numpy(), 1 / (xn * xn + 1), rtol=1e-5)
    np.testing.assert_allclose((x @ x.t()).numpy(), xn @ xn.T, rtol=1e-4, atol=1e-4)
    t = opscope.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.sum().item() == 10.0 and t.mean(dim=0).tolist() == [2.0, 3.0]


def test_neuron_device_computes_the_same():
    x = opscope.randn(16, 64, seed=0)
    y_cpu = opscope.rms_norm(x, [64], eps=1e-6)
    y_dev = opscope.rms_norm(x.to("neuron"), [64], eps=1e-6)
    assert y_dev.device == "neuron:0"
    opscope.neuron.synchronize()
    np.testing.assert_allclose(y_dev.to("cpu").numpy(), y_cpu.numpy(), rtol=1e-5, atol=1e-6)


def test_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        opscope.ones(2, 3) + opscope.ones(2, 4)
    with pytest.raises(RuntimeError):
        opscope.ones(2, device="nowhere")


def test_profile_schedule_record_function_and_export(tmp_path):
    ready = []
    x = opscope.randn(8, 32, seed=0).to("neuron")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
                 schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: ready.append(p.step_num), record_shapes=True,
                 experimental_config=NeuronConfig(modes=[ProfileMode.DEVICE,
                                                         ProfileMode.RUNTIME])) as prof:
        for _ in range(6):
            with record_function("my_block"):
                y = x * x + 1
            opscope.neuron.synchronize()
            prof.step()
    assert ready == [4]  # one window: steps 2 and 3 recorded, handed over at step 4
    rows = prof.key_averages().to_pandas()
    block = rows[rows["name"] == "my_block"]
    assert int(block["count"].iloc[0]) == 2
    assert int(rows[rows["name"] == "aten::mul"]["count"].iloc[0]) == 2
    table = prof.key_averages().table(sort_by="self_privateuse1_time_total", row_limit=5)
    assert "Self NEURON" in table
    path = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(path)
    loaded = opscope.load(path)
    assert loaded.key_averages().table(sort_by="count", row_limit=-1) == \
        prof.key_averages().table(sort_by="count", row_limit=-1)
    assert float(y.numpy()[0, 0]) == pytest.approx(float(x.numpy()[0, 0]) ** 2 + 1, rel=1e-5)


def test_a_second_session_is_a_profiler_error():
    with profile():
        with pytest.raises(opscope.profiler.ProfilerError):
            profile().start()


def test_compile_fuses_and_matches_eager():
    def naive(x, w):
        return x * opscope.rsqrt(opscope.mean(x * x, dim=-1, keepdim=True) + 1e-6) * w

    x = opscope.randn(8, 64, seed=0).to("neuron")
    w = opscope.randn(64, seed=1).to("neuron")
    compiled = opscope.compile(naive, backend="neuron")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        y = compiled(x, w)
        opscope.neuron.synchronize()
    np.testing.assert_allclose(y.to("cpu").numpy(), naive(x, w).to("cpu").numpy(),
                               rtol=1e-5, atol=1e-6)
    assert compiled.stats.compiles == 1 and compiled.last.kernels >= 1
    names = set(prof.key_averages().to_pandas()["name"])
    assert any(n.startswith("Torch-Compiled Region") for n in names), names


def test_rmsnorm_example_matches_the_demo():
    example = runpy.run_path(str(SOURCE_DIR / "examples" / "rmsnorm.py"))
    results = example["run"]("neuron")
    demo = json.loads(run_cli("demo", "rmsnorm", "--json").stdout)
    sort_by = "self_privateuse1_time_total"
    for variant in demo["variants"]:
        prof, _ = results[variant["name"]]
        ours = prof.key_averages().to_pandas(sort_by=sort_by)
        theirs = variant["key_averages"]["rows"]
        # "Torch-Compiled Region: F/C": F numbers the compiled functions of the process.
        region = re.compile(r"(Torch-Compiled Region: )\d+/")
        assert [region.sub(r"\1F/", n) for n in ours["name"]] == \
            [region.sub(r"\1F/", r["name"]) for r in theirs], variant["name"]
        assert list(ours["count"]) == [r["count"] for r in theirs]
        # The same model times, to the nanosecond the clock mapping may round differently.
        assert list(ours["self_device_time_total_us"]) == pytest.approx(
            [r["self_device_time_total_us"] for r in theirs], rel=1e-6, abs=0.01)
