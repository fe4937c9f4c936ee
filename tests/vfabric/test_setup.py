"""A fabric that cannot be built says why (FabricSetupError, naming the input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nic_emu.config import NicConfig
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
