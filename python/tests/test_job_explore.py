"""opscope.load(dir) for whole jobs, and opscope.explore in a notebook."""

import json
import os
import urllib.error
import urllib.request

import pytest

import opscope
from conftest import fixture_trace, run_cli


@pytest.fixture(scope="module")
def job_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("job")
    run_cli("demo", "allreduce", "--ranks", 4, "--straggler", 2, "--delay-us", 500, "--out", out)
    return out


def test_job_frames_match_the_cli(job_dir):
    job = opscope.load(job_dir)
    assert isinstance(job, opscope.Job)
    doc = json.loads(run_cli("report", job_dir, "--json").stdout)
    for name in ("ranks", "collectives", "collective_summary", "stragglers", "ops"):
        frame = getattr(job, name)()
        assert list(frame.columns) == list(doc[name][0]), name
        assert frame.to_dict("records") == doc[name], name
    assert list(job.ranks()["rank"]) == [0, 1, 2, 3]
    assert int(job.stragglers()["rank"].iloc[0]) == 2  # the rank the demo delayed
    assert job.world_size == 4 and not job.partial
    assert job.report() == run_cli("report", job_dir).stdout
    assert job.findings == doc["findings"]


def test_job_with_a_corrupt_rank_is_partial(job_dir, tmp_path):
    files = sorted(job_dir.rglob("trace.json"))
    broken = tmp_path / "rank_3" / "trace.json"
    broken.parent.mkdir()
    broken.write_text(files[3].read_text()[:5000])
    job = opscope.load(files[:3] + [broken])
    assert job.partial
    assert job.errors[0]["file"] == str(broken) and job.errors[0]["offset"] > 0
    assert list(job.ranks()["rank"]) == [0, 1, 2]


def test_explore_serves_and_stops():
    path = fixture_trace("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    with opscope.explore(path) as ex:
        url = ex.url
        assert url.startswith("http://127.0.0.1:") and ex.port > 0
        with urllib.request.urlopen(ex.url, timeout=10) as resp:
            assert resp.status == 200
            assert b"<html" in resp.read().lower()
        assert f'src="{ex.url}"' in ex._repr_html_()
    assert not ex.running
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=2)
    ex.stop()  # idempotent


def test_explore_missing_file_is_trace_error(tmp_path):
    with pytest.raises(opscope.TraceError):
        opscope.explore(tmp_path / "absent.json")


def test_load_takes_bytes_paths(job_dir):
    one = sorted(job_dir.rglob("trace.json"))[0]
    trace = opscope.load(os.fsencode(one))  # was opened as "b'/...'"
    assert len(trace.slices()) == len(opscope.load(one).slices())
    job = opscope.load([os.fsencode(p) for p in sorted(job_dir.rglob("trace.json"))])
    assert list(job.ranks()["rank"]) == [0, 1, 2, 3]


def test_duplicate_rank_error_names_the_file(job_dir, tmp_path):
    files = sorted(job_dir.rglob("trace.json"))
    copy = tmp_path / "again.json"
    copy.write_text(files[1].read_text())
    with pytest.raises(opscope.TraceError) as e:
        opscope.load([files[1], copy])
    assert "is claimed by two traces" in str(e.value)
    assert e.value.file == str(copy)


def test_load_of_no_files_is_an_error():
    for empty in ([], ()):
        with pytest.raises(opscope.TraceError, match="no trace given"):
            opscope.load(empty)
