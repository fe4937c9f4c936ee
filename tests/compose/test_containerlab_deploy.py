"""The containerlab export, deployed (root, Docker engine). containerlab is not installed
here, so the test does what `containerlab deploy` does for `kind: linux` nodes: one
container per node on a management network, named ``clab-<lab>-<node>``, with the lab's
configuration directory bound, its ``cmd`` as command; then one veth pair per link between
the nodes' network namespaces. The controller node must program every switch, and a
transfer between two NIC nodes must arrive byte for byte, before and after a link cut."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from testbed.containerlab import CONTROLLER_NODE, ClabOptions, container_name, export_containerlab
from topologies import load

from .conftest import docker, missing_tools

pytestmark = [
    pytest.mark.integration,
    pytest.mark.compose,
    pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools())),
]

PROGRAMMED_TIMEOUT_S = 300
TRANSFER_BYTES = 256 * 1024
# What a containerlab `linux` node may do to its own interfaces (tc, ip, AF_PACKET).
NODE_CAPABILITIES = ("NET_ADMIN", "NET_RAW")


class Lab:
    """A containerlab topology file deployed with plain docker, as containerlab would."""

    def __init__(self, path: Path, network: str) -> None:
        self.path = path
        self.document: dict[str, Any] = yaml.safe_load(path.read_text())
        self.name = self.document["name"]
        self.network = network
        self.containers: list[str] = []

    def deploy(self) -> None:
        docker("network", "create", "--label", f"mrc-test-lab={self.name}", self.network)
        for node, spec in self.document["topology"]["nodes"].items():
            name = container_name(self.name, node)
            binds = []
            for bind in spec.get("binds", []):
                source, _, rest = bind.partition(":")
                binds += ["-v", f"{(self.path.parent / source).resolve()}:{rest}"]
            caps = [arg for cap in NODE_CAPABILITIES for arg in ("--cap-add", cap)]
            docker(
                "run", "-d", "--init", "--name", name, "--hostname", node,
                "--network", self.network, *caps, *binds, spec["image"],
                *shlex.split(spec["cmd"]),
            )  # fmt: skip
            self.containers.append(name)
        for link in self.document["topology"]["links"]:
            (a_node, a_if), (b_node, b_if) = (end.split(":") for end in link["endpoints"])
            pid_a, pid_b = (self.pid(node) for node in (a_node, b_node))
            subprocess.run(
                ["ip", "link", "add", a_if, "netns", pid_a, "mtu", str(link["mtu"]),
                 "type", "veth", "peer", "name", b_if, "netns", pid_b, "mtu", str(link["mtu"])],
                check=True, capture_output=True, text=True,
            )  # fmt: skip

    def pid(self, node: str) -> str:
        return docker(
            "inspect", "--format", "{{.State.Pid}}", container_name(self.name, node)
        ).strip()

    def exec(self, node: str, *argv: str, timeout: float = 180) -> str:
        return docker("exec", container_name(self.name, node), *argv, timeout=timeout)

    def logs(self, node: str) -> str:
        result = subprocess.run(
            ["docker", "logs", container_name(self.name, node)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        return result.stdout + result.stderr

    def destroy(self) -> None:
        for name in self.containers:
            docker("rm", "-f", name, check=False)
        docker("network", "rm", self.network, check=False)


def nic_python(lab: Lab, nic: str, code: str) -> Any:
    """Runs ``code`` in a NIC node with ``nic`` = the launcher's client of its control
    socket (testbed.nics.RunningNic); returns what it prints."""
    script = (
        "import json; from testbed.nics import RunningNic; "
        f"nic = RunningNic({nic!r}, '/run/mrc/nics/{nic}.sock', timeout=30); {code}"
    )
    return json.loads(lab.exec(nic, "python3", "-c", script))


def transfer(lab: Lab, src: str, dst: str, seed: int) -> None:
    info = nic_python(
        lab,
        src,
        f"t = nic.send({dst!r}, {TRANSFER_BYTES}, seed={seed}); "
        "print(json.dumps(nic.wait_transfer(t, 120)))",
    )
    assert info["done"] and not info["failed"], info
    assert info["bytes_delivered_intact"] == TRANSFER_BYTES
    held = nic_python(lab, dst, "print(json.dumps(nic.received()))")
    assert any(
        m.get("from") == src and m.get("complete") and m.get("sha256") == info["sha256"]
        for m in held
    ), (info["sha256"], held)


@pytest.fixture
def lab(tmp_path: Path, p4emu_image: str) -> Iterator[Lab]:
    path = tmp_path / "tiny.clab.yml"
    lab_name = f"mrc-t{os.getpid()}"
    export_containerlab("tiny", path, ClabOptions(image=p4emu_image, lab=lab_name))
    deployed = Lab(path, f"{lab_name}-mgmt")
    try:
        yield deployed
    finally:
        deployed.destroy()
    assert docker("ps", "-a", "-q", "--filter", f"name=clab-{lab_name}-").split() == []


def test_exported_lab_comes_up_programs_every_switch_and_carries_a_transfer(lab: Lab) -> None:
    topo = load("tiny")
    lab.deploy()
    deadline = time.monotonic() + PROGRAMMED_TIMEOUT_S
    while True:
        logs = lab.logs(CONTROLLER_NODE)
        lines = logs.splitlines()
        if "watching" in logs and all(
            any(sw.name in line and "programmed" in line for line in lines) for sw in topo.switches
        ):
            break
        if time.monotonic() > deadline:
            pytest.fail(f"the controller node did not program every switch:\n{logs[-3000:]}")
        time.sleep(2)

    transfer(lab, "nic0", "nic3", seed=1)
    # A physical cut inside a switch node: silent to the NICs, the transfer must still arrive.
    lab.exec("p0-t0-0", "ip", "link", "set", "p0-t0-0-eth3", "down")
    transfer(lab, "nic0", "nic3", seed=2)
