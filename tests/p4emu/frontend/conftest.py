"""Makes ``frontend_helpers`` importable by the front-end tests.

The project runs pytest with ``--import-mode=importlib``, where test directories are not put
on ``sys.path``; the shared helper module is registered here, before test modules import it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _register_helpers() -> None:
    if "frontend_helpers" in sys.modules:
        return
    path = Path(__file__).with_name("frontend_helpers.py")
    spec = importlib.util.spec_from_file_location("frontend_helpers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["frontend_helpers"] = module
    spec.loader.exec_module(module)


_register_helpers()
