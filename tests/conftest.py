"""Shared pytest configuration."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest


def _register_p4lang_tools():
    """Make ``tests/p4lang_tools.py`` importable as ``p4lang_tools`` (importlib mode puts no
    test directory on ``sys.path``)."""
    if "p4lang_tools" in sys.modules:
        return sys.modules["p4lang_tools"]
    path = Path(__file__).with_name("p4lang_tools.py")
    spec = importlib.util.spec_from_file_location("p4lang_tools", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["p4lang_tools"] = module
    spec.loader.exec_module(module)
    return module


p4lang_tools = _register_p4lang_tools()


def pytest_configure(config: pytest.Config) -> None:
    # $MRC_P4LANG_BIN goes on PATH so that code under test finds p4c / BMv2 by name too.
    directory = p4lang_tools.env_bin_dir()
    if directory is not None:
        os.environ["PATH"] = f"{directory}{os.pathsep}{os.environ.get('PATH', '')}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # BMv2 integration tests run only where simple_switch_grpc is installed.
    if p4lang_tools.find_tool("simple_switch_grpc"):
        return
    skip_bmv2 = pytest.mark.skip(reason=p4lang_tools.missing_reason("simple_switch_grpc"))
    for item in items:
        if "bmv2" in item.keywords:
            item.add_marker(skip_bmv2)
