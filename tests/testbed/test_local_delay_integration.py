"""Local mode with link delay: ``tiny`` with 200 us on every link comes up (each switch
told its ports' delays, each NIC its planes') and a transfer through a T1 arrives intact."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed import rundir as rd
from testbed.exceptions import ModeError
from testbed.fabric import Fabric, switch_command
from testbed.local import up_local
from testbed.options import FabricOptions
from testbed.traffic import run_transfer
from topologies import from_mapping, load, to_mapping

from .conftest import free_bases, nic_program

DELAY_US = 200.0


def _p4emu_switch_missing() -> bool:
    try:
        switch_command("p4emu")
    except ModeError:
        return True
    return False


pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        _p4emu_switch_missing(), reason="p4emu-switch (p4emu.server.main) is not installed yet"
    ),
]


@pytest.fixture(scope="module")
def delayed_tiny() -> Iterator[Fabric]:
    doc = to_mapping(load("tiny"))
    doc["link_defaults"]["delay_us"] = DELAY_US
    topology = from_mapping(doc, "tiny-delayed", "tiny")
    with tempfile.TemporaryDirectory(prefix="mrt-", dir="/tmp") as root:
        udp, grpc = free_bases(topology)
        options = FabricOptions(
            root=Path(root), udp_base_port=udp, grpc_base_port=grpc, nic_command=nic_program()
        )
        result = up_local(topology, options)
        try:
            assert not any("not emulated" in note for note in result.notes)
            yield result.fabric
        finally:
            rd.teardown(result.fabric.rundir)


def test_every_end_of_every_link_is_given_the_delay(delayed_tiny: Fabric) -> None:
    topology = delayed_tiny.topology
    for record in delayed_tiny.state.processes_of("switch"):
        argv = record.argv
        delays = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--link-delay-us"]
        ports = topology.switch(record.node).ports
        assert delays == [f"{port}={DELAY_US!r}" for port in ports], record.node
    for nic in topology.nics:
        path = delayed_tiny.rundir.file("nics", f"{nic.name}.json")
        config = json.loads(path.read_text(encoding="utf-8"))
        assert {p["delay_us"] for p in config["ports"].values()} == {DELAY_US}


def test_a_transfer_through_a_t1_completes_intact(delayed_tiny: Fabric) -> None:
    outcome = run_transfer(delayed_tiny, "nic0", "nic3", 256 * 1024, timeout=120)
    assert outcome.intact, outcome.line()
    stats = delayed_tiny.nic("nic0").request("stats")
    assert stats["process"]["tx_delayed"] > 0  # the sender's frames went through its delay
    assert all(plane["delay_us"] == DELAY_US for plane in stats["planes"].values())
