"""Names of a package imported from their modules on first use (PEP 562).

A package's ``__init__`` lists where each public name lives and sets
``__getattr__ = lazy_names(__name__, {name: module, ...})``: importing the package then
imports none of those modules, and the first ``package.name`` (or ``from package import
name``) imports the one it needs (docs/virtual-fabric.md, "Start-up": a virtual run
imports only what it runs).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``where[name]``'s ``name`` (imported at each
    call; Python caches the module); any other name is an ``AttributeError``."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
