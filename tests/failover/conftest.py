"""Markers of the failover suite.

- ``scenario``: every test of the files in :data:`SCENARIO_FILES` runs bundled scenarios
  end to end on the virtual fabric (minutes of CPU in all). They run in CI (``scripts/test``
  with no ``-m``), not in the unit loop (``-m unit``, tests/conftest.py).
- ``slow`` tests (every bundled scenario on every seed) run only when ``-m`` asks for them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCENARIO_FILES = frozenset({"test_bundled_scenarios.py", "test_mutation.py", "test_sweep.py"})


@pytest.hookimpl(tryfirst=True)  # before tests/conftest.py gives ``unit`` to the unmarked
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path
        if path.parent == HERE and path.name in SCENARIO_FILES:
            item.add_marker(pytest.mark.scenario)
    if "slow" in (config.option.markexpr or ""):
        return
    keep = [item for item in items if item.get_closest_marker("slow") is None]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep
