"""`pip install ./python` works offline with Debian's packages only (docs/python.md).

pip runs with no package index and no build isolation, so anything it would download makes the
install fail; the package goes into a target folder (pip's own way to install outside a virtual
environment) and is imported from there, away from the build tree.
"""

import os
import subprocess
import sys

from conftest import BINARY_DIR, SOURCE_DIR, fixture_trace


def test_pip_installs_offline_and_the_installed_module_loads_a_trace(tmp_path):
    target = tmp_path / "site"
    env = dict(os.environ, OPSCOPE_BUILD_DIR=str(BINARY_DIR.resolve()), PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-index", "--no-build-isolation",
         "--no-deps", "--target", str(target), str(SOURCE_DIR.resolve() / "python")],
        capture_output=True, text=True, env=env, cwd=tmp_path)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]

    trace = fixture_trace("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    env["PYTHONPATH"] = str(target)
    run = subprocess.run(
        [sys.executable, "-c",
         "import sys, opscope; t = opscope.load(sys.argv[1]); "
         "print(opscope.__file__); print(len(t.key_averages()))", str(trace)],
        capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    module_file, rows = run.stdout.split()
    assert module_file.startswith(str(target)), module_file
    assert int(rows) > 0
