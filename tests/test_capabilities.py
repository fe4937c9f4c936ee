"""The capability probes (tests/capabilities.py) and the time limits of every test
(tests/conftest.py): a test that needs a capability skips with the reason where the
machine refuses it, and no test can hang the run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import capabilities
import pytest

PROBES = (
    capabilities.netns_missing,
    capabilities.user_netns_missing,
    capabilities.veth_missing,
    capabilities.mininet_missing,
)


@pytest.fixture
def fresh_probes() -> Iterator[None]:
    for probe in PROBES:
        probe.cache_clear()
    yield
    for probe in PROBES:
        probe.cache_clear()


@pytest.fixture
def refusing_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``unshare`` and ``ip`` that fail as they do in an unprivileged container."""
    for tool, message in (
        ("unshare", "unshare: unshare failed: Operation not permitted"),
        ("ip", "RTNETLINK answers: Operation not permitted"),
    ):
        script = tmp_path / tool
        script.write_text(f"#!/bin/sh\necho '{message}' >&2\nexit 1\n")
        script.chmod(0o755)
    (tmp_path / "mnexec").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "mnexec").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(capabilities.os, "geteuid", lambda: 0)
    return tmp_path


def test_root_in_an_unprivileged_container_gets_reasons_not_failures(
    fresh_probes: None, refusing_tools: Path
) -> None:
    assert "cannot create a network namespace" in str(capabilities.netns_missing())
    assert "Operation not permitted" in str(capabilities.netns_missing())
    assert "cannot create a veth pair" in str(capabilities.veth_missing())
    assert "private network namespace" in str(capabilities.user_netns_missing())
    assert capabilities.mininet_missing() == capabilities.netns_missing()


def test_without_root_the_reason_says_so(
    fresh_probes: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capabilities.os, "geteuid", lambda: 1000)
    assert capabilities.veth_missing() == "veth pairs need root"
    assert capabilities.mininet_missing() == "Mininet mode needs root"
    assert capabilities.netns_missing() == "network namespaces need root"


def test_a_missing_tool_is_named(
    fresh_probes: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    monkeypatch.setattr(capabilities.os, "geteuid", lambda: 0)
    assert capabilities.veth_missing() == "ip is not installed (apt-packages.txt)"
    assert capabilities.mininet_missing() == "mnexec is not installed (apt-packages.txt)"


def test_a_probe_that_hangs_is_cut_off(
    fresh_probes: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "unshare"
    script.write_text("#!/bin/sh\nexec sleep 60\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(capabilities.os, "geteuid", lambda: 0)
    monkeypatch.setattr(capabilities, "PROBE_TIMEOUT_S", 0.5)
    assert "TimeoutExpired" in str(capabilities.netns_missing())


def test_every_unit_test_has_a_time_limit(request: pytest.FixtureRequest) -> None:
    assert float(request.config.getini("timeout")) > 0


@pytest.mark.integration
def test_every_integration_test_has_a_time_limit(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("timeout")
    assert marker is not None and marker.args[0] == capabilities.INTEGRATION_TIMEOUT_S


def _allowed(request: pytest.FixtureRequest, wanted: str | None, marks: list) -> float | None:
    """The timeout ``tests/conftest.py`` gives a test with ``marks`` when the process's
    generated code runs pure (``wanted``: why) or compiled (None)."""
    from p4emu.backend import native

    hook = conftest_hook(request.config)
    item = pytest.Function.from_parent(request.node.parent, name=request.node.name)
    for mark in marks:
        item.add_marker(mark)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(native, "wanted", lambda: wanted)
        hook(request.config, [item])
    marker = item.get_closest_marker("timeout")
    return None if marker is None else float(marker.args[0])


def conftest_hook(config: pytest.Config):
    (module,) = [
        p for p in config.pluginmanager.get_plugins() if hasattr(p, "_allow_native_builds")
    ]
    return module._allow_native_builds


def test_a_test_that_builds_programs_natively_gets_time_for_each(
    request: pytest.FixtureRequest,
) -> None:
    per = capabilities.NATIVE_BUILD_TIMEOUT_S
    ini = float(request.config.getini("timeout"))
    builds = pytest.mark.native_builds(10)
    assert _allowed(request, None, [builds]) == ini + 10 * per
    own = pytest.mark.timeout(100)
    assert _allowed(request, None, [own, builds]) == 100 + 10 * per
    assert _allowed(request, None, [pytest.mark.integration, builds]) == (
        capabilities.INTEGRATION_TIMEOUT_S + 10 * per
    )
    # pure generated code builds nothing: the limit stays what it was
    assert _allowed(request, "$MRC_TESTBED_PURE is set", [builds]) is None
    assert _allowed(request, "$MRC_TESTBED_PURE is set", [own, builds]) == 100
