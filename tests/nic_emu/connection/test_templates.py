"""nic_emu.connection.templates: per-plane frames carry both ends' addresses."""

from __future__ import annotations

from mrc_wire import EV_PROBE_QPN
from nic_emu.connection.common import PLACEHOLDER_ADDR
from nic_emu.connection.templates import (
    data_templates,
    nack_templates,
    probe_templates,
    sack_templates,
)
from nic_emu.core import NicCore
from topologies import AddressPlan, load


def test_each_plane_template_carries_that_plane_addresses() -> None:
    plan = AddressPlan(load("tiny"))
    core = NicCore("nic0", plan)
    peer = [plan.nic_address("nic3", p).packed for p in range(core.plane_count)]
    for build in (
        lambda: data_templates(core, peer, 0x123),
        lambda: sack_templates(core, peer, 0x123),
        lambda: nack_templates(core, peer, 0x123),
        lambda: probe_templates(core, peer),
    ):
        templates = build()
        assert len(templates) == core.plane_count
        for p, t in enumerate(templates):
            assert (t.src_mac, t.dst_mac) == (core.macs[p], core.gateway_macs[p])
            assert t.outer_src == t.inner_src == core.addrs[p]
            assert (t.inner_dst, t.outer_dst) == (peer[p], PLACEHOLDER_ADDR)
    assert {t.dqpn for t in data_templates(core, peer, 0x123)} == {0x123}
    assert {t.dqpn for t in probe_templates(core, peer)} == {EV_PROBE_QPN}
