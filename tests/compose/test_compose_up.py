"""docker compose end to end (root, Docker engine): build the images (reused while their inputs
are unchanged), bring up ``tiny`` in Mininet in a container, send a transfer and check it
byte for byte, cut a link, send again, tear everything down, and check that no container,
network, volume, namespace or veth is left. The same on BMv2 where p4lang builds are found."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import (
    BASE_IMAGE,
    Project,
    docker,
    find_p4lang_bin,
    inputs_tag,
    missing_tools,
    p4lang_image,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.compose,
    pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools())),
]

TRANSFER_BYTES = 256 * 1024
HEALTHY_TIMEOUT_S = 600
CUT = ("p0-t0-0", "p0-t1-0")  # a T0-T1 link of plane 0 on nic0 -> nic3's paths


def host_network_objects() -> tuple[frozenset[str], frozenset[str]]:
    """(named network namespaces, veth interfaces) of the host."""
    namespaces = subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True, check=True
    ).stdout
    veths = subprocess.run(
        ["ip", "-o", "link", "show", "type", "veth"], capture_output=True, text=True, check=True
    ).stdout
    return (
        frozenset(line.split()[0] for line in namespaces.splitlines() if line.strip()),
        frozenset(line.split(":")[1].strip().split("@")[0] for line in veths.splitlines()),
    )


def project_objects(name: str) -> dict[str, list[str]]:
    label = f"label=com.docker.compose.project={name}"
    return {
        "containers": docker("ps", "-a", "-q", "--filter", label).split(),
        "networks": docker("network", "ls", "-q", "--filter", label).split(),
        "volumes": docker("volume", "ls", "-q", "--filter", label).split(),
    }


def wait_healthy(project: Project) -> None:
    container = project.compose("ps", "-q", "fabric").stdout.strip()
    assert container, "the fabric container was not created"
    deadline = time.monotonic() + HEALTHY_TIMEOUT_S
    while True:
        state = json.loads(docker("inspect", "--format", "{{json .State}}", container))
        health = (state.get("Health") or {}).get("Status")
        if health == "healthy":
            return
        if not state["Running"] or time.monotonic() > deadline:
            logs = project.compose("logs", "--no-color", "fabric", check=False).stdout
            pytest.fail(f"fabric is {state['Status']}/{health}, not healthy:\n{logs[-4000:]}")
        time.sleep(2)


def transfer(project: Project, results: Path, name: str) -> dict[str, object]:
    """nic0 -> nic3 through the one-shot ``run`` service (the fabric's namespaces, the
    mounted results folder), as the scenario runner will."""
    script = (
        f"mrc-testbed send nic0 nic3 --bytes {TRANSFER_BYTES} --timeout 120 --json"
        f" > /results/{name}.json"
    )
    project.compose("run", "--rm", "run", "sh", "-c", script, timeout=300)
    return json.loads((results / f"{name}.json").read_text())


def assert_byte_exact(outcome: dict[str, object]) -> None:
    assert outcome["intact"] is True, outcome
    assert outcome["bytes_delivered_intact"] == TRANSFER_BYTES
    parts = outcome["parts"]
    assert isinstance(parts, list)
    assert [part["sha256"] for part in parts] == [outcome["sha256"]]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    return folder


def bring_up_transfer_cut_and_tear_down(project: Project, results: Path) -> None:
    before = host_network_objects()
    assert project_objects(project.name) == {"containers": [], "networks": [], "volumes": []}
    try:
        project.compose("up", "-d", "fabric", timeout=300)
        wait_healthy(project)

        assert_byte_exact(transfer(project, results, "before-cut"))

        cut = project.compose("exec", "-T", "fabric", "mrc-testbed", "link", "down", *CUT)
        assert "is now down" in cut.stdout
        status = json.loads(
            project.compose("exec", "-T", "fabric", "mrc-testbed", "status", "--json").stdout
        )
        assert [sorted(link) for link in status["links_down"]] == [sorted(CUT)]

        assert_byte_exact(transfer(project, results, "after-cut"))
    finally:
        down = project.compose("down", "--volumes", "--timeout", "60", check=False)
    assert down.returncode == 0, down.stderr
    logs = down.stdout + down.stderr
    assert project_objects(project.name) == {"containers": [], "networks": [], "volumes": []}, logs
    # Other tests may add and remove their own at the same time: only new ones count.
    after = host_network_objects()
    assert (after[0] - before[0], after[1] - before[1]) == (frozenset(), frozenset())


@pytest.fixture
def project_name() -> Iterator[str]:
    name = f"mrc-compose-{os.getpid()}-{time.monotonic_ns() % 1_000_000}"
    yield name
    # Whatever happened, nothing of this project survives the test.
    subprocess.run(
        [
            "docker-compose",
            "-p",
            name,
            "-f",
            str(Path(__file__).parents[2] / "docker-compose.yml"),
            "down",
            "--volumes",
            "--timeout",
            "10",
        ],
        capture_output=True,
        check=False,
    )


def test_compose_fabric_on_p4emu(base_image: str, project_name: str, results: Path) -> None:
    project = Project(
        project_name,
        {
            "TARGET": "p4emu",
            "TOPO": "tiny",
            "BASE_IMAGE": BASE_IMAGE,
            "MRC_IMAGE_TAG": inputs_tag("p4emu", base_image),
            "MRC_RESULTS": str(results),
        },
    )
    project.build("p4emu")
    bring_up_transfer_cut_and_tear_down(project, results)


def test_compose_fabric_on_bmv2(base_image: str, project_name: str, results: Path) -> None:
    bin_dir = find_p4lang_bin()
    if bin_dir is None:
        pytest.skip("no p4lang builds: set MRC_P4LANG_BIN or put simple_switch_grpc on PATH")
    p4lang = p4lang_image(bin_dir)
    project = Project(
        project_name,
        {
            "TARGET": "bmv2",
            "TOPO": "tiny",
            "BASE_IMAGE": BASE_IMAGE,
            "P4LANG_IMAGE": p4lang,
            "MRC_IMAGE_TAG": inputs_tag("bmv2", base_image, p4lang),
            "MRC_RESULTS": str(results),
        },
    )
    project.build("bmv2")
    bring_up_transfer_cut_and_tear_down(project, results)
