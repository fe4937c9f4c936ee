"""``scripts/test`` in the README's own setting: a default (unprivileged) Debian 12 container
run as root, from the minimal base image (docker/base-image.sh), the checkout copied in.

Root there has no CAP_NET_ADMIN or CAP_SYS_ADMIN: no veth pair, no network namespace, no
Mininet, no nested Docker engine. Every test that needs one of them must skip and say why
(tests/capabilities.py), none may hang (pytest-timeout), and nothing may fail or error.

Bounded: the whole unit suite in a container would add about 15 minutes to CI, so this runs
``scripts/test`` (its apt and pip installs, ruff, then pytest) on :data:`SUBSET`, the files
that hold every kind of capability-dependent test: veth pairs (AF_PACKET ports, the
conformance harness's probe), network namespaces (the docs' ``sh integration`` blocks use
``unshare`` where they can), Mininet mode, and the nested Docker engine (tests/compose), with
the probes' own tests and a few quick unit files beside them. Measured on the 2-core
machine under load: 22.5 min in all the first time (the base image 5, scripts/test's apt
installs 8.5 and pip installs 6, the subset 2).
"""

from __future__ import annotations

import re
import subprocess

import pytest

from .conftest import BASE_IMAGE, ROOT, missing_tools

pytestmark = [
    pytest.mark.integration,
    pytest.mark.compose,
    pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools())),
]

SUBSET = (
    "tests/test_capabilities.py",
    "tests/test_exit_codes.py",
    "tests/p4emu/io/test_drivers.py",
    "tests/nic_emu/test_afpacket_integration.py",
    "tests/testbed/test_mininet_integration.py",
    "tests/compose",
)
SUITE_TIMEOUT_S = 2400
"""apt and pip installs from scratch, then the subset: bounded, never a hang."""


def test_scripts_test_in_an_unprivileged_container_fails_nothing_and_says_why_it_skips(
    base_image: str,
) -> None:
    copy = "tar -C /src --exclude=./.venv --exclude=./.git -cf - . | tar -C /work -xf -"
    script = (
        f"set -eu; mkdir /work; {copy}; cd /work; "
        f"exec scripts/test -m 'not bmv2' -rs -p no:cacheprovider {' '.join(SUBSET)}"
    )
    result = subprocess.run(
        # The default capabilities of `docker run`: not --privileged, no --cap-add.
        ["docker", "run", "--rm", "--network", "host", "-v", f"{ROOT}:/src:ro", BASE_IMAGE,
         "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT_S,
        check=False,
    )  # fmt: skip
    tail = result.stdout[-6000:] + result.stderr[-3000:]
    assert result.returncode == 0, tail
    summary = result.stdout.strip().splitlines()[-1]
    assert "failed" not in summary and "error" not in summary, tail
    assert re.search(r"\d+ passed", summary), tail
    skips = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skips, f"in an unprivileged container the capability tests must skip:\n{tail}"
    for line in skips:  # "SKIPPED [n] FILE:LINE: REASON"
        assert re.match(r"SKIPPED \[\d+\] \S+:\d+: \S", line), line
    reasons = "\n".join(skips)
    assert "veth pair" in reasons and "network namespace" in reasons, reasons
