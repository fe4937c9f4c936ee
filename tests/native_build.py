"""The native build for the tests that compare both paths (tests/clikit/test_hotpath.py,
tests/vfabric/test_parallel.py): every module of ``clikit.hotpath.COMPILED_MODULES``
built into a folder of the test's own, which ``$MRC_TESTBED_NATIVE_DIR`` then selects."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from p4emu.backend import native as generated_native

ROOT = Path(__file__).resolve().parents[1]


def build_native(tmp_path: Path) -> Path:
    """``setup.py build_ext`` into ``tmp_path/lib`` (skips the test, with the reason, where
    no compiler or Cython is present); the folder of the built modules."""
    missing = generated_native.build_missing()
    if missing:
        pytest.skip(missing)
    lib = tmp_path / "lib"
    build = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(lib),
         "--build-temp", str(tmp_path / "build")],
        cwd=ROOT,
        env={**os.environ, "MRC_TESTBED_NATIVE": "1"},
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    return lib
