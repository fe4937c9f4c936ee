"""Makes ``bmv2_harness``, ``bmv2_stf`` and ``p4testgen_diff`` importable by the conformance tests (``--import-mode=importlib``
puts no test directory on ``sys.path``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _register(name: str) -> None:
    if name in sys.modules:
        return
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


_register("bmv2_harness")
_register("bmv2_stf")
_register("p4testgen_diff")
_register("p4fuzz")
_register("p4fuzz_diff")
