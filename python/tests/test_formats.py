"""opscope.load on the other profilers' formats (docs/formats.md): XLA's XPlane and Nsight Systems'
SQLite export, held against independent readers of the same files (protoc's decode, Python's
sqlite3), and a folder of rank exports as a job."""

import json
import shutil
import sqlite3
import sys

import pytest

import opscope
from conftest import FIXTURES_DIR, SOURCE_DIR

XPLANE = FIXTURES_DIR / "traces/xplane/tensorflow-profiler/34.83.195.179_6003.xplane.pb"
NSYS = FIXTURES_DIR / "nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"


def _fixture(path):
    if not path.exists():
        pytest.skip(f"fixture {path} not found (OPSCOPE_FIXTURES_DIR)")
    return path


def test_xplane_holds_every_event_protoc_decodes_and_tracelens_timelines():
    sys.path.insert(0, str(SOURCE_DIR / "tests/import/xplane"))
    import xspace_text
    if shutil.which("protoc") is None:
        pytest.skip("protoc (Debian's protobuf-compiler) is not installed")
    summary = xspace_text.summary(xspace_text.decode(_fixture(XPLANE),
                                                     FIXTURES_DIR.parent / "reference" / "xplane"))
    trace = opscope.load(XPLANE)
    assert trace.metadata["format"] == "xplane"
    slices = trace.slices()
    assert len(slices) == sum(line["events"] for plane in summary for line in plane["lines"])
    streams = sum(line["events"] for plane in summary if plane["plane"].startswith("/device:")
                  for line in plane["lines"] if line["line"].startswith("Stream"))
    assert slices.kind.isin(["kernel", "memcpy", "memset"]).sum() == streams
    # One timeline per GPU, TraceLens's JAX gpu_timeline (reference in ps).
    with open(SOURCE_DIR / "tests/import/xplane/tracelens_gpu_timeline.json") as f:
        reference = json.load(f)["tensorflow-profiler/34.83.195.179_6003.xplane.pb"]
    devices = trace.report_json()["device_timelines"]
    assert [d["device"] for d in devices] == sorted(reference)
    for d in devices:
        assert d["busy_ns"] * 1000 == reference[d["device"]]["busy_time"]
        assert d["total_ns"] * 1000 == reference[d["device"]]["total_time"]


def test_nsys_export_holds_what_sql_counts():
    trace = opscope.load(_fixture(NSYS))
    assert trace.metadata["format"] == "nsys-sqlite"
    slices = trace.slices()
    db = sqlite3.connect(f"file:{NSYS}?immutable=1", uri=True)
    for table, kind in (("CUPTI_ACTIVITY_KIND_KERNEL", "kernel"),
                        ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy")):
        count, total = db.execute(f"SELECT count(*), sum(end - start) FROM {table}").fetchone()
        rows = slices[slices.kind == kind]
        assert len(rows) == count
        assert rows.dur_ns.sum() == total
    assert json.loads(trace.metadata["extra"]["distributedInfo"]) == {"rank": 0}
    assert trace.launch_stats()["name"].tolist()[:2] == ["cudaMemcpy", "cudaLaunchKernel"]


def test_a_folder_of_rank_exports_is_a_job(tmp_path):
    shutil.copy(_fixture(NSYS), tmp_path / "saxpy0.sqlite")
    shutil.copy(NSYS, tmp_path / "saxpy1.sqlite")
    (tmp_path / "saxpy1.sqlite").chmod(0o644)
    db = sqlite3.connect(tmp_path / "saxpy1.sqlite")
    db.execute("UPDATE StringIds SET value = 'MPI Rank 1' WHERE value = 'MPI Rank 0'")
    db.execute("UPDATE NVTX_EVENTS SET text = 'MPI Rank 1' WHERE text = 'MPI Rank 0'")
    db.commit()
    db.close()
    job = opscope.load(tmp_path)
    assert isinstance(job, opscope.Job)
    assert sorted(job.ranks()["rank"].tolist()) == [0, 1]
