"""The markers of docs/contributing.md ("Markers and test loops"), on this session's tests."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAILOVER = ROOT / "tests" / "failover"


#: declared markers that say something about a test, not which loop runs it
ATTRIBUTE_MARKERS = frozenset({"native_builds"})


def declared_markers() -> set[str]:
    """The selection markers of pyproject.toml (a marker's name without its arguments)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = {
        line.split(":")[0].split("(")[0]
        for line in config["tool"]["pytest"]["ini_options"]["markers"]
    }
    assert names >= ATTRIBUTE_MARKERS
    return names - ATTRIBUTE_MARKERS


def conftest_with(config: pytest.Config, name: str) -> ModuleType:
    (module,) = [p for p in config.pluginmanager.get_plugins() if hasattr(p, name)]
    return module


def test_every_declared_marker_but_unit_keeps_a_test_out_of_the_unit_loop(
    request: pytest.FixtureRequest,
) -> None:
    not_unit = conftest_with(request.config, "NOT_UNIT").NOT_UNIT
    assert set(not_unit) == declared_markers() - {"unit"}


def test_unit_marks_exactly_the_tests_without_another_marker(
    request: pytest.FixtureRequest,
) -> None:
    others = declared_markers() - {"unit"}
    wrong = [
        item.nodeid
        for item in request.session.items
        if (item.get_closest_marker("unit") is None)
        != any(item.get_closest_marker(name) for name in others)
    ]
    assert not wrong, wrong[:10]


def scenario_files() -> set[str]:
    """``SCENARIO_FILES`` of tests/failover/conftest.py (read, not imported: a conftest is
    loaded by pytest only when its folder is collected)."""
    tree = ast.parse((FAILOVER / "conftest.py").read_text(encoding="utf-8"))
    (value,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "SCENARIO_FILES"
    ]
    assert isinstance(value, ast.Call)
    return set(ast.literal_eval(value.args[0]))


def test_the_scenario_files_exist_and_their_tests_are_marked(
    request: pytest.FixtureRequest,
) -> None:
    names = scenario_files()
    assert names and all((FAILOVER / name).is_file() for name in names)
    for item in request.session.items:
        if item.path.parent == FAILOVER and item.path.name in names:
            assert item.get_closest_marker("scenario") is not None, item.nodeid


class _Plugins:
    def __init__(self, *names: str) -> None:
        self.names = set(names)

    def hasplugin(self, name: str) -> bool:
        return name in self.names


def _workers_given(
    request: pytest.FixtureRequest,
    markexpr: str,
    numprocesses: object = None,
    *,
    plugins: tuple[str, ...] = ("xdist",),
    worker: bool = False,
    collectonly: bool = False,
) -> object:
    """``-n`` after tests/conftest.py's ``pytest_cmdline_main`` saw these options."""
    hook = conftest_with(request.config, "UNIT_LOOP_WORKERS").pytest_cmdline_main
    option = SimpleNamespace(markexpr=markexpr, numprocesses=numprocesses, collectonly=collectonly)
    config = SimpleNamespace(option=option, pluginmanager=_Plugins(*plugins))
    if worker:
        config.workerinput = {"workerid": "gw0"}
    hook(config)
    return option.numprocesses


def test_the_unit_loop_alone_runs_on_a_worker_per_core(request: pytest.FixtureRequest) -> None:
    assert _workers_given(request, "unit") == "auto"
    assert _workers_given(request, "unit", 0) == 0  # -n 0: one process
    assert _workers_given(request, "unit", 3) == 3
    for other in ("", "integration", "slow", "unit or scenario", "not integration"):
        assert _workers_given(request, other) is None, other  # CI's run stays serial
    assert _workers_given(request, "unit", worker=True) is None  # no workers of workers
    assert _workers_given(request, "unit", plugins=()) is None  # -p no:xdist
    assert _workers_given(request, "unit", collectonly=True) is None
