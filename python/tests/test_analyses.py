"""The analyses of `report --perf --memory --json`, `opscope.check` and the plots from Python,
against the CLI's own output on the demo's traces."""

import json

import pytest

import opscope
from conftest import fixture_trace, run_cli


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    work = tmp_path_factory.mktemp("analyses")
    (work / "slow.cfg").write_text("exec_launch_us = 300\nvector_ghz = 0.5\n")
    run_cli("demo", "rmsnorm", "--iters", "4", "--out", work / "base")
    run_cli("demo", "rmsnorm", "--iters", "4", "--out", work / "slow", "--device-config",
            work / "slow.cfg")
    naive = lambda d: next(p for p in (work / d).rglob("trace.json") if p.parent.name == "naive")
    return naive("base"), naive("slow")


def test_analyses_match_the_cli(demo):
    base, _ = demo
    trace = opscope.load(base)
    cli = json.loads(run_cli("report", base, "--perf", "--memory", "--json", "--rows", "-1").stdout)
    pm = trace.perf_model()
    assert len(pm) == len(cli["perf_model"]) > 0
    assert list(pm["name"]) == [r["name"] for r in cli["perf_model"]]
    assert "gflops" in pm and "bound" in pm
    idle = trace.idle_breakdown()
    assert len(idle) > 0 and "host_wait_us" in idle
    cp = trace.critical_path()
    assert cp.attrs["length_ns"] == cli["critical_path"]["length_ns"]
    mem = trace.memory_timeline()
    assert len(mem) > 0 and "allocated" in mem
    peaks = [d["peak_allocated"] for d in mem.attrs["devices"] if "peak_allocated" in d]
    assert not peaks or max(peaks) == mem["allocated"].max()
    timelines = trace.device_timelines()
    assert len(timelines) == 1
    assert timelines["busy_ns"][0] == cli["device_timeline"]["busy_ns"]


def test_neuron_device_matches_the_cli(demo):
    base, _ = demo
    trace = opscope.load(base)
    cli = json.loads(run_cli("report", base, "--json", "--rows", "-1").stdout)["neuron_device"]
    engines = trace.neuron_device()
    assert list(engines["engine"]) == [e["engine"] for e in cli["engines"]]
    assert list(engines["busy_ns"]) == [e["busy_ns"] for e in cli["engines"]]
    assert len(engines.attrs["opcodes"]) == len(cli["opcodes"]) > 0
    assert engines.attrs["dma"] == cli["dma"]


def test_diff_kernel_rows(demo):
    base, slow = demo
    kernels = opscope.diff(base, slow, rows="kernels")
    cli = json.loads(run_cli("diff", base, slow, "--json").stdout)
    assert len(kernels) == len(cli["kernels"]) > 0
    assert len(kernels.attrs["rows"]) == len(cli["rows"])


def test_check_verdicts(demo):
    base, slow = demo
    result = opscope.check(base, slow)
    assert result.verdict == "regression" and result.exit_code == 1 and not result
    cli = run_cli("check", base, slow, "--json", check=False)
    assert cli.returncode == 1
    assert json.loads(cli.stdout)["verdict"] == result.verdict
    assert "step" in set(result.metrics["metric"])
    assert len(result.moved) > 0
    same = opscope.check(base, base)
    assert same.exit_code == 0 and same
    assert opscope.check(base, slow, max_regression=500).exit_code == 0
    with pytest.raises(ValueError):
        opscope.check(base, slow, metrics=["bogus"])
    assert opscope.check(base, slow, metrics=["op:no_such_op"]).exit_code == 2


def test_plots_are_figures(demo):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    trace = opscope.load(demo[0])
    for fig in (trace.plot.timeline(), trace.plot.roofline(), trace.plot.idle(),
                trace.plot.memory()):
        assert isinstance(fig, Figure)
        assert fig.axes


def test_roofline_points_on_a_real_trace():
    pytest.importorskip("matplotlib")
    trace = opscope.load(fixture_trace("tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"))
    pm = trace.perf_model()
    modelled = pm[["flops_per_byte", "tflops_per_s_mean"]].dropna()
    assert len(modelled) > 0
    fig = trace.plot.roofline()
    points = fig.axes[0].collections[0].get_offsets()
    assert len(points) == len(modelled[(modelled > 0).all(axis=1)])
    assert len(fig.axes[0].lines) == 1  # the roof
    assert len(trace.idle_breakdown()) > 0 and len(trace.memory_timeline()) > 0
