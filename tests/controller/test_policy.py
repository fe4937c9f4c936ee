"""Switch policy: thresholds scaled to the queue, validation of every knob."""

from __future__ import annotations

from ipaddress import IPv6Network

import pytest

from controller import p4names
from controller.exceptions import PlanError
from controller.policy import SwitchPolicy, class_params_for


def test_64_packet_queue_gives_the_program_defaults() -> None:
    params = class_params_for(64)
    fabric = params[p4names.PORT_CLASS_FABRIC]
    assert (fabric.ecn_min_qdepth, fabric.ecn_max_qdepth) == (10, 38)
    assert (fabric.trim_qdepth, fabric.queue_limit) == (48, 60)
    assert fabric.ecn_enable and fabric.trim_enable
    assert not params[p4names.PORT_CLASS_HOST].ecn_enable
    assert params[p4names.PORT_CLASS_HOST].trim_enable
    cpu = params[p4names.PORT_CLASS_CPU]
    assert not cpu.ecn_enable and not cpu.trim_enable


@pytest.mark.parametrize("depth", [4, 5, 16, 100, 1000, 0xFFFF])
def test_thresholds_are_ordered_below_the_queue(depth: int) -> None:
    p = class_params_for(depth)[p4names.PORT_CLASS_FABRIC]
    assert 0 < p.ecn_min_qdepth < p.ecn_max_qdepth <= p.trim_qdepth
    assert p.trim_qdepth <= p.queue_limit < depth
    assert max(p.values()) <= 0xFFFF


@pytest.mark.parametrize("depth", [0, 3, 0x10000])
def test_queue_depth_out_of_range(depth: int) -> None:
    with pytest.raises(PlanError, match=f"queue depth {depth} packets"):
        class_params_for(depth)


def test_policy_validation() -> None:
    with pytest.raises(PlanError, match="control priority 8"):
        SwitchPolicy(control_priority=8)
    with pytest.raises(PlanError, match="unknown punt kind 'ttl'"):
        SwitchPolicy(punts=frozenset({"ttl"}))
    with pytest.raises(PlanError, match="not an IPv6 network"):
        SwitchPolicy(cpu_prefixes=("ff02::/16",))  # type: ignore[arg-type]
    with pytest.raises(PlanError, match="queue depth 2"):
        SwitchPolicy(queue_packets=2)
    policy = SwitchPolicy(punts=frozenset({"no-route", "non-ipv6"}))
    assert policy.punt_flags() == (0, 1, 0, 1)
    assert SwitchPolicy().cpu_prefixes == (IPv6Network("ff02::/16"), IPv6Network("fe80::/10"))
