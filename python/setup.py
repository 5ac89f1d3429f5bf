"""Installs the `opscope` Python package: `pip install ./python` (see docs/python.md).

The extension is built by the project's own CMake build (the same sources and flags as
`make build`), with Debian's packages only, no network: when OPSCOPE_BUILD_DIR (default: the
repository's build/) is a configured build, its opscope_python target is brought up to date
there; otherwise a build without tests and benchmarks is configured in build-python/. An
OPSCOPE_BUILD_DIR that is not a configured build is an error.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("OPSCOPE_BUILD_DIR")
        build_dir = pathlib.Path(given or ROOT / "build").resolve()
        if given and not (build_dir / "CMakeCache.txt").exists():
            raise RuntimeError(f"OPSCOPE_BUILD_DIR={given} is not a configured build "
                               f"(no {build_dir / 'CMakeCache.txt'}); run `make build` there "
                               "or unset it to configure build-python/")
        if not (build_dir / "CMakeCache.txt").exists():
            build_dir = ROOT / "build-python"
            subprocess.run(
                ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DOPSCOPE_BUILD_TESTS=OFF",
                 "-DOPSCOPE_BUILD_BENCH=OFF", f"-DPython_EXECUTABLE={sys.executable}"],
                check=True)
        jobs = os.environ.get("JOBS", "2")
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "opscope_python",
                        "-j", jobs], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / "opscope" / f"_opscope{suffix}"
        if not built.exists():
            raise RuntimeError(f"{built} was not built: the build is for another Python than "
                               f"{sys.executable}, or pybind11-dev is missing (docs/python.md)")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)


setup(
    name="opscope",
    version="0.1.0",
    description="Profiler and trace analysis: torch.profiler's tables, pandas frames, Explorer",
    packages=["opscope"],
    package_dir={"opscope": "opscope"},
    ext_modules=[CMakeExtension("opscope._opscope")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    install_requires=["numpy", "pandas"],
    zip_safe=False,
)
