"""Shared pytest configuration."""

from __future__ import annotations

import shutil

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # BMv2 integration tests run only where simple_switch_grpc is installed.
    if shutil.which("simple_switch_grpc"):
        return
    skip_bmv2 = pytest.mark.skip(reason="simple_switch_grpc is not on PATH")
    for item in items:
        if "bmv2" in item.keywords:
            item.add_marker(skip_bmv2)
