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
machine under load: the installs once per change of their inputs (:func:`prepared_image`:
8 min, plus 5 for the base image when it is missing), then 69 s a run (inside: 35 passed,
10 skipped with their reasons, in 20 s).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess

import pytest

from .conftest import BASE_IMAGE, ROOT, docker, image_id, missing_tools, remove_older_tags

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
PREPARED_INPUTS = ("apt-packages.txt", "pyproject.toml")
CHECKOUT = "/checkout"  # where the container's copy of the checkout (and its .venv) lives
_REQUIREMENTS = (
    "import tomllib; p = tomllib.load(open('/src/pyproject.toml', 'rb'))['project']; "
    "print('\\n'.join(p['dependencies'] + p['optional-dependencies']['test']))"
)


def prepared_image(base_image: str) -> str:
    """The base image after what ``scripts/test`` installs before it tests: the apt packages
    of apt-packages.txt and a ``/checkout/.venv`` holding pyproject.toml's dependencies (not the
    project), tagged by those inputs, so CI pays for the installs once per change of them;
    ``scripts/test`` still runs every step (its dpkg check, venv check, pip install of the
    project, ruff) in the container."""
    digest = hashlib.sha256(f"{base_image} {CHECKOUT}".encode())
    for name in PREPARED_INPUTS:
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes())
    image = f"mrc-testbed/suite:in-{digest.hexdigest()[:16]}"
    if image_id(image) is not None:
        return image
    container = f"mrc-suite-prepare-{os.getpid()}"
    script = (
        "set -eu; apt-get update -qq; "
        "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
        "$(grep -vE '^\\s*(#|$)' /src/apt-packages.txt) >/dev/null; "
        f"python3 -m venv {CHECKOUT}/.venv; "
        f'python3 -c "{_REQUIREMENTS}" > /tmp/requirements.txt; '
        f"{CHECKOUT}/.venv/bin/pip install -q -r /tmp/requirements.txt; rm /tmp/requirements.txt"
    )
    try:
        prepare = subprocess.run(
            ["docker", "run", "--name", container, "--network", "host",
             "-v", f"{ROOT}:/src:ro", BASE_IMAGE, "bash", "-c", script],
            capture_output=True,
            text=True,
            timeout=SUITE_TIMEOUT_S,
            check=False,
        )  # fmt: skip
        assert prepare.returncode == 0, prepare.stderr[-3000:]
        docker("commit", container, image, timeout=600)
    finally:
        docker("rm", "-f", container, check=False)
    remove_older_tags("mrc-testbed/suite", image.partition(":")[2])
    return image


def test_scripts_test_in_an_unprivileged_container_fails_nothing_and_says_why_it_skips(
    base_image: str,
) -> None:
    image = prepared_image(base_image)
    copy = f"tar -C /src --exclude=./.venv --exclude=./.git -cf - . | tar -C {CHECKOUT} -xf -"
    script = (
        f"set -eu; mkdir -p {CHECKOUT}; {copy}; cd {CHECKOUT}; "
        f"exec scripts/test -m 'not bmv2' -rs -p no:cacheprovider {' '.join(SUBSET)}"
    )
    result = subprocess.run(
        # The default capabilities of `docker run`: not --privileged, no --cap-add.
        ["docker", "run", "--rm", "--network", "host", "-v", f"{ROOT}:/src:ro", image,
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
    print(summary, *skips, sep="\n")  # shown with -rP / -s: what skipped, and why
