"""Shared test setup: where the fixtures, the build and the CLI are (ctest sets the variables;
run by hand as ``PYTHONPATH=build/python OPSCOPE_BINARY_DIR=build /usr/bin/python3 -m pytest
python/tests``)."""

import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("OPSCOPE_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))
BINARY_DIR = pathlib.Path(os.environ.get("OPSCOPE_BINARY_DIR", SOURCE_DIR / "build"))
FIXTURES_DIR = pathlib.Path(os.environ.get("OPSCOPE_FIXTURES_DIR",
                                           SOURCE_DIR.parent / "shared" / "fixtures"))
TRACES_DIR = FIXTURES_DIR / "traces"


def fixture_trace(relative):
    path = TRACES_DIR / relative
    if not path.exists():
        pytest.skip(f"fixture {path} not found (OPSCOPE_FIXTURES_DIR)")
    return path


def all_fixture_traces():
    return sorted(p for p in TRACES_DIR.rglob("*") if p.name.endswith((".json", ".json.gz")))


def run_cli(*args, check=True):
    """Runs the opscope CLI of the same build; returns the CompletedProcess (text)."""
    cli = BINARY_DIR / "opscope"
    if not cli.exists():
        pytest.skip(f"{cli} not built")
    result = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result
