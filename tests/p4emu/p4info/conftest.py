"""Makes ``references`` (the p4c reference P4Info manifest) importable by the P4Info tests.

The project runs pytest with ``--import-mode=importlib``, where test directories are not put
on ``sys.path``; the shared helper module is registered here, before test modules import it.
"""

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


_register("references")
