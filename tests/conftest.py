"""Shared pytest configuration."""

from __future__ import annotations

import os

# The suite runs the pure-Python path, the reference (docs/virtual-fabric.md, "Compiled hot
# path"), whatever the install built: set before any test imports a hot-path package, and
# inherited by the processes tests start. tests/clikit/test_hotpath.py builds the native
# modules itself and compares both paths' event logs; MRC_TESTBED_PURE=0 runs the suite
# against the installed native build instead (p4emu's tests then compile each program).
os.environ.setdefault("MRC_TESTBED_PURE", "1")

import capabilities
import p4lang_tools
import pytest


def pytest_configure(config: pytest.Config) -> None:
    # $MRC_P4LANG_BIN goes on PATH so that code under test finds p4c / BMv2 by name too.
    directory = p4lang_tools.env_bin_dir()
    if directory is not None:
        os.environ["PATH"] = f"{directory}{os.pathsep}{os.environ.get('PATH', '')}"


# The unit loop runs on one xdist worker per core (``-n auto``) unless ``-n`` is given
# (``-n 0``: one process); every other selection, CI's full run included, stays serial:
# integration, BMv2 and Mininet tests share ports, namespaces and the CPU they time.
UNIT_LOOP_WORKERS = "auto"


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads ``-n`` (a conftest: called first)
def pytest_cmdline_main(config: pytest.Config) -> None:
    if (
        config.pluginmanager.hasplugin("xdist")
        and not hasattr(config, "workerinput")  # an xdist worker runs the tests it is given
        and config.option.markexpr == "unit"
        and config.option.numprocesses is None
        and not config.option.collectonly
    ):
        config.option.numprocesses = UNIT_LOOP_WORKERS


# Markers that take a test out of the unit loop (pyproject.toml lists them all). A test with
# none of them is marked ``unit``: ``scripts/test -m unit`` is the quick loop.
NOT_UNIT = ("integration", "bmv2", "htsim", "compose", "scenario", "slow")


# Runs after the folders' conftests (tests/failover's is ``tryfirst``) have added their
# markers and before pytest's ``-m`` selection (a plugin registered earlier: called later).
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not any(item.get_closest_marker(name) for name in NOT_UNIT):
            item.add_marker(pytest.mark.unit)
    # Every integration and compose test has a time limit (capabilities.*_TIMEOUT_S); a
    # test's own timeout mark wins; unit tests have the ini's timeout (pyproject.toml).
    for item in items:
        if item.get_closest_marker("timeout") is not None:
            continue
        if "compose" in item.keywords:
            item.add_marker(pytest.mark.timeout(capabilities.COMPOSE_TIMEOUT_S))
        elif "integration" in item.keywords:
            item.add_marker(pytest.mark.timeout(capabilities.INTEGRATION_TIMEOUT_S))
    _allow_native_builds(config, items)
    # BMv2 integration tests run only where simple_switch_grpc is installed.
    if p4lang_tools.find_tool("simple_switch_grpc"):
        return
    skip_bmv2 = pytest.mark.skip(reason=p4lang_tools.missing_reason("simple_switch_grpc"))
    for item in items:
        if "bmv2" in item.keywords:
            item.add_marker(skip_bmv2)


def _allow_native_builds(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked ``native_builds(N)`` loads N P4 programs: where generated code runs
    compiled, each new one is built first, so its time limit (its own mark, else the
    integration or the ini limit) grows by N x capabilities.NATIVE_BUILD_TIMEOUT_S."""
    marked = [(item, item.get_closest_marker("native_builds")) for item in items]
    marked = [(item, mark) for item, mark in marked if mark is not None]
    if not marked:
        return
    from p4emu.backend import native

    if native.wanted() is not None:  # generated code runs pure: nothing is built
        return
    for item, mark in marked:
        (programs,) = mark.args
        own = item.get_closest_marker("timeout")
        if own is not None:
            limit = float(own.args[0] if own.args else own.kwargs["timeout"])
        elif "integration" in item.keywords:
            limit = capabilities.INTEGRATION_TIMEOUT_S
        else:
            limit = float(config.getini("timeout"))
        allowance = programs * capabilities.NATIVE_BUILD_TIMEOUT_S
        item.add_marker(pytest.mark.timeout(limit + allowance), append=False)
