"""Makes ``backend_helpers`` importable by the backend tests.

pytest runs with ``--import-mode=importlib`` (test directories are not on ``sys.path``),
so the shared helper module is registered here before the test modules import it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _register_helpers() -> None:
    if "backend_helpers" in sys.modules:
        return
    path = Path(__file__).with_name("backend_helpers.py")
    spec = importlib.util.spec_from_file_location("backend_helpers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["backend_helpers"] = module
    spec.loader.exec_module(module)


_register_helpers()
