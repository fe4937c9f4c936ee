"""Makes ``backend_helpers``, ``header_layouts`` and the conformance corpus's
``bmv2_harness`` importable by the backend tests.

pytest runs with ``--import-mode=importlib`` (test directories are not on ``sys.path``),
so the shared helper module is registered here before the test modules import it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _register_helpers(name: str, path: Path) -> None:
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


HERE = Path(__file__).parent
_register_helpers("backend_helpers", HERE / "backend_helpers.py")
_register_helpers("header_layouts", HERE / "header_layouts.py")
_register_helpers("bmv2_harness", HERE.parents[1] / "conformance" / "bmv2_harness.py")
