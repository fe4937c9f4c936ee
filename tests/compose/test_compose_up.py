"""docker compose end to end (root, Docker engine): build the images (reused while their inputs
are unchanged), bring up ``tiny`` in Mininet in a container, send a transfer and check it
byte for byte, cut a link, send again, tear everything down, and check that no container,
network, volume or network namespace (and so no veth) of the fabric is left. The same on
BMv2 where p4lang builds are found."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from topologies import load

from .conftest import (
    Project,
    docker,
    find_p4lang_bin,
    image_env,
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
DOCKER_NETNS_DIR = "/var/run/docker/netns"
ALL_PROFILES = ("--profile", "controller", "--profile", "scenario")
CONTROLLER_TIMEOUT_S = 180


def network_namespaces(container: str) -> set[int]:
    """Inode numbers of the network namespaces of every process in ``container`` (the
    fabric's own namespace and each Mininet host's)."""
    pids = docker("top", container, "-eo", "pid").split()[1:]
    inodes = set()
    for pid in pids:
        try:
            inodes.add(os.stat(f"/proc/{pid}/ns/net").st_ino)
        except OSError:  # the process ended meanwhile
            continue
    return inodes


def live_network_namespaces() -> set[int]:
    """Network namespaces that still exist: some process is in one, or the engine holds it
    open (its sandbox files)."""
    inodes = set()
    for ns in [*Path("/proc").glob("[0-9]*/ns/net"), *Path(DOCKER_NETNS_DIR).glob("*")]:
        try:
            inodes.add(ns.stat().st_ino)
        except OSError:
            continue
    return inodes


def project_objects(name: str) -> dict[str, list[str]]:
    label = f"label=com.docker.compose.project={name}"
    return {
        "containers": docker("ps", "-a", "-q", "--filter", label).split(),
        "networks": docker("network", "ls", "-q", "--filter", label).split(),
        "volumes": docker("volume", "ls", "-q", "--filter", label).split(),
    }


def wait_healthy(project: Project) -> str:
    """Waits until the fabric is healthy; returns its container id."""
    container = project.compose("ps", "-q", "fabric").stdout.strip()
    assert container, "the fabric container was not created"
    deadline = time.monotonic() + HEALTHY_TIMEOUT_S
    while True:
        state = json.loads(docker("inspect", "--format", "{{json .State}}", container))
        health = (state.get("Health") or {}).get("Status")
        if health == "healthy":
            return container
        if not state["Running"] or time.monotonic() > deadline:
            logs = project.compose("logs", "--no-color", "fabric", check=False).stdout
            pytest.fail(f"fabric is {state['Status']}/{health}, not healthy:\n{logs[-4000:]}")
        time.sleep(2)


def transfer(project: Project) -> dict[str, object]:
    """nic0 -> nic3 on the running fabric (``mrc-testbed send`` in its container)."""
    sent = project.compose(
        "exec", "-T", "fabric", "mrc-testbed", "send", "nic0", "nic3",
        "--bytes", str(TRANSFER_BYTES), "--timeout", "120", "--json",
        timeout=300,
    )  # fmt: skip
    return json.loads(sent.stdout)


def run_service_writes_results(project: Project, results: Path) -> None:
    """The one-shot ``run`` service: its default failover scenario on a Mininet fabric of its
    own, beside the running one; the result lands in the mounted folder and passes."""
    project.compose("run", "--rm", "run", timeout=900)
    written = sorted(results.glob("*/result.json"))
    assert written, f"no result.json under {results}: {sorted(results.rglob('*'))}"
    for path in written:
        outcome = json.loads(path.read_text())
        assert outcome["schema"].startswith("mrc-testbed/scenario-result/"), path
        assert outcome["mode"] == "mininet" and outcome["ok"] is True, outcome["checks"]


def controller_programs_every_switch(project: Project) -> None:
    """The opt-in ``controller`` service: push, then watch, every switch of the fabric."""
    project.compose("--profile", "controller", "up", "-d", "controller", timeout=300)
    switches = [sw.name for sw in load("tiny").switches]
    deadline = time.monotonic() + CONTROLLER_TIMEOUT_S
    while True:
        logs = project.compose("logs", "--no-color", "controller", check=False).stdout
        watched = logs.partition("watching")[2].splitlines()
        if all(
            any(f" {sw} " in line and "programmed" in line for line in watched) for sw in switches
        ):
            return
        if time.monotonic() > deadline:
            pytest.fail(f"the controller service did not program every switch:\n{logs[-3000:]}")
        time.sleep(2)


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


def bring_up_transfer_cut_and_tear_down(project: Project, results: Path, *, scenario: bool) -> None:
    """``scenario``: also run the ``run`` service (it drives p4emu whatever the target, so
    one variant is enough)."""
    assert project_objects(project.name) == {"containers": [], "networks": [], "volumes": []}
    namespaces: set[int] = set()
    try:
        project.compose("up", "-d", "fabric", timeout=300)
        container = wait_healthy(project)

        assert_byte_exact(transfer(project))

        cut = project.compose("exec", "-T", "fabric", "mrc-testbed", "link", "down", *CUT)
        assert "is now down" in cut.stdout
        status = json.loads(
            project.compose("exec", "-T", "fabric", "mrc-testbed", "status", "--json").stdout
        )
        assert [sorted(link) for link in status["links_down"]] == [sorted(CUT)]

        assert_byte_exact(transfer(project))
        if scenario:
            run_service_writes_results(project, results)
        controller_programs_every_switch(project)
        # The fabric's namespace and one per NIC (Mininet hosts), none of them the host's.
        namespaces = network_namespaces(container)
        assert len(namespaces) == 1 + len(load("tiny").nics)
        assert os.stat("/proc/self/ns/net").st_ino not in namespaces
    finally:
        down = project.compose(*ALL_PROFILES, "down", "--volumes", "--timeout", "60", check=False)
    assert down.returncode == 0, down.stderr
    assert project_objects(project.name) == {"containers": [], "networks": [], "volumes": []}
    # Every veth of the fabric lived in those namespaces: gone with them. (Interface names
    # on the host say nothing: other tests make veths with the same names meanwhile.)
    assert namespaces & live_network_namespaces() == set()


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
            *ALL_PROFILES,
            "down",
            "--volumes",
            "--timeout",
            "10",
        ],
        capture_output=True,
        check=False,
    )


def test_compose_fabric_on_p4emu(
    base_image: str, p4emu_image: str, project_name: str, results: Path
) -> None:
    env = {**image_env("p4emu", base_image), "TOPO": "tiny", "MRC_RESULTS": str(results)}
    assert p4emu_image == f"mrc-testbed/p4emu:{env['MRC_IMAGE_TAG']}"
    project = Project(project_name, env)
    bring_up_transfer_cut_and_tear_down(project, results, scenario=True)


def test_compose_fabric_on_bmv2(base_image: str, project_name: str, results: Path) -> None:
    bin_dir = find_p4lang_bin()
    if bin_dir is None:
        pytest.skip("no p4lang builds: set MRC_P4LANG_BIN or put simple_switch_grpc on PATH")
    p4lang = p4lang_image(bin_dir)
    env = {
        **image_env("bmv2", base_image, p4lang),
        "TOPO": "tiny",
        "P4LANG_IMAGE": p4lang,
        "MRC_RESULTS": str(results),
    }
    project = Project(project_name, env)
    project.build("bmv2")
    bring_up_transfer_cut_and_tear_down(project, results, scenario=False)
