"""Makes ``p4src_helpers`` importable by the mrc_switch.p4 tests.

pytest runs with ``--import-mode=importlib`` (test directories are not on ``sys.path``),
so the shared helper module is registered here before the test modules import it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _register_helpers() -> None:
    if "p4src_helpers" in sys.modules:
        return
    path = Path(__file__).with_name("p4src_helpers.py")
    spec = importlib.util.spec_from_file_location("p4src_helpers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["p4src_helpers"] = module
    spec.loader.exec_module(module)


_register_helpers()
