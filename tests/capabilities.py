"""What this machine lets the tests do, probed rather than guessed from the user id.

Root is not enough: in a default (unprivileged) container root has no CAP_NET_ADMIN or
CAP_SYS_ADMIN, so it cannot create a veth pair or a network namespace, and Mininet then
waits forever on a shell that never started. Each probe here tries the very thing a test
needs, once per session (cached), bounded in time, inside a throwaway network namespace
where it can, and returns why it cannot be done (the skip reason) or None.

``tests/conftest.py`` makes this module importable as ``capabilities``, and gives every
integration and compose test the time limit defined here.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence

PROBE_TIMEOUT_S = 20.0
"""Longest a probe may take (a command that hangs is a refusal)."""
INTEGRATION_TIMEOUT_S = 900
"""Longest an integration test may run (pytest-timeout, set by tests/conftest.py; a test's
own ``timeout`` mark wins): a test waiting on something that never comes fails with a stack
trace instead of hanging the run. Unit tests have the ini's ``timeout`` (pyproject.toml)."""
COMPOSE_TIMEOUT_S = 3600
"""Longest a docker compose test may run: it may build images first."""
NATIVE_BUILD_TIMEOUT_S = 12
"""What a test's time limit grows by for each P4 program its ``native_builds(N)`` mark says
it loads, when the process runs generated code compiled (``MRC_TESTBED_PURE=0``): a program
not yet in the native cache is compiled first, by Cython and the C compiler (about 5 s of
CPU for a small random program on CI's 2-core machine, twice that on a loaded one)."""


def _tried(argv: Sequence[str]) -> str | None:
    """None if ``argv`` ran and exited 0, else what went wrong (one line)."""
    try:
        result = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if result.returncode == 0:
        return None
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit {result.returncode}"


def _tool_missing(*tools: str) -> str | None:
    for tool in tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-packages.txt)"
    return None


@functools.cache
def netns_missing() -> str | None:
    """Why a new network namespace cannot be made as root here (``unshare --net``)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    missing = _tool_missing("unshare")
    if missing:
        return missing
    failed = _tried(["unshare", "--net", "true"])
    if failed:
        return f"cannot create a network namespace here (no CAP_SYS_ADMIN?): {failed}"
    return None


@functools.cache
def user_netns_missing() -> str | None:
    """Why ``unshare --net`` (with ``--user --map-root-user`` when not root) fails here."""
    missing = _tool_missing("unshare", "ip")
    if missing:
        return missing
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    failed = _tried(["unshare", *user, "--net", "ip", "link", "set", "lo", "up"])
    if failed:
        return f"cannot run in a private network namespace here: {failed}"
    return None


@functools.cache
def veth_missing() -> str | None:
    """Why a veth pair cannot be created here (tried in a throwaway network namespace, or
    in this one under a unique name, removed at once, where namespaces are refused)."""
    if os.geteuid() != 0:
        return "veth pairs need root"
    missing = _tool_missing("ip")
    if missing:
        return missing
    add = ["ip", "link", "add", "mrcprobe0", "type", "veth", "peer", "name", "mrcprobe1"]
    if netns_missing() is None:
        failed = _tried(["unshare", "--net", *add])
    else:
        tag = f"mrcp{os.getpid() % 100000}"
        failed = _tried(["ip", "link", "add", f"{tag}a", "type", "veth", "peer", "name", f"{tag}b"])
        if failed is None:
            _tried(["ip", "link", "del", f"{tag}a"])
    if failed:
        return f"cannot create a veth pair here (no CAP_NET_ADMIN?): {failed}"
    return None


@functools.cache
def mininet_missing() -> str | None:
    """Why Mininet cannot run here: it needs root, network namespaces (``mnexec -n``) and
    veth pairs; without them its node shells never start and Mininet waits forever."""
    if os.geteuid() != 0:
        return "Mininet mode needs root"
    missing = _tool_missing("mnexec")
    if missing:
        return missing
    return netns_missing() or veth_missing()
