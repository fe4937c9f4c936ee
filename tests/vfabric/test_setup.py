"""A fabric that cannot be built says why (FabricSetupError, naming the input)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nic_emu.config import NicConfig
from p4emu.backend.program import compile_stats
from vfabric import VirtualFabric
from vfabric.exceptions import FabricSetupError


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"topology": "no-such-topology"}, "no-such-topology"),
        ({"topology": "tiny", "bin_ns": 0}, "bin_ns"),
        ({"topology": "tiny", "nic_config": {"nic9": NicConfig()}}, "nic9"),
        ({"topology": "tiny", "nic_config": {"nic1": "fast"}}, "nic1"),
        ({"topology": "tiny", "event_log": Path("/dev/null/x/events.jsonl")}, "event log"),
        ({"topology": "tiny", "pcap_dir": Path("/dev/null/pcap")}, "pcap"),
    ],
)
def test_bad_setup_gets_a_specific_error(kwargs: dict, words: str) -> None:
    with pytest.raises(FabricSetupError, match=words):
        VirtualFabric(**kwargs)


def test_per_nic_config_applies_to_that_nic_only() -> None:
    fabric = VirtualFabric("tiny", nic_config={"nic2": NicConfig(mtu_payload=1024)})
    assert fabric.nics["nic2"].core.config.mtu_payload == 1024
    assert fabric.nics["nic0"].core.config.mtu_payload == NicConfig().mtu_payload


def test_a_fabric_generates_its_program_once() -> None:
    before = compile_stats()
    fabric = VirtualFabric("tiny")
    after = compile_stats()
    generated = after.generated - before.generated
    reused = after.reused - before.reused
    loaded = after.loaded - before.loaded
    # one generation or one template kept on disk (none when a live fabric's template is
    # reused), then only run-time objects per switch
    assert generated + loaded <= 1
    assert generated + loaded + reused == len(fabric.switches) > 1
    templates = {id(node.switch.program.template) for node in fabric.switches.values()}
    assert len(templates) == 1


# what a virtual fabric run does not need: the controller's P4Runtime client, pusher,
# watcher and entry notation, the command-line kit, PyYAML (its topology is made in
# code), and argparse (it parses no command line)
UNUSED_BY_A_VIRTUAL_RUN = (
    "argparse",
    "gettext",
    "clikit.main",
    "clikit.types",
    "controller.p4rt_client",
    "controller.push",
    "controller.watch",
    "controller.notation",
    "controller.endpoints",
    "yaml",
)


def test_the_virtual_run_path_imports_only_what_it_needs() -> None:
    script = (
        "import sys\n"
        "from testbed.reference import suites, vfside\n"
        "from vfabric import VirtualFabric\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded = set(done.stdout.split())
    assert "vfabric.fabric" in loaded and "controller.plan" in loaded
    assert sorted(loaded.intersection(UNUSED_BY_A_VIRTUAL_RUN)) == []
