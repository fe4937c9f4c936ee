"""The address plan: uSIDs, addresses, MACs, EVs, carriers."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from ipaddress import IPv6Address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topologies import (
    AddressingError,
    AddressPlan,
    Path,
    Plane,
    Role,
    Topology,
    UnknownNameError,
    UsidSpaceError,
    decode_ev,
    decode_usid,
    encode_ev,
    join_ev,
    load,
    loads,
    mac_bytes,
    paper_scale,
    split_ev,
)
from topologies.addressing import LIB_START, downlink_usid_of, node_usid
from topologies.model import switch_name

PLAN = AddressPlan(load("paper-8plane"))


@pytest.mark.parametrize("name", ["tiny", "small", "paper-8plane"])
def test_switch_usids_are_unique_nonzero_below_the_local_range_and_carry_the_plane(
    name: str,
) -> None:
    plan = AddressPlan(load(name))
    usids = [plan.switch_usid(s) for s in plan.topology.switches]
    assert len(set(usids)) == len(usids)
    for sw, usid in zip(plan.topology.switches, usids):
        assert 0 < usid < LIB_START
        assert usid >> 12 == sw.plane  # plane copied into each uSID
        assert plan.usid_switch(usid) == sw.name
        assert decode_usid(usid).name == sw.name


def test_usid_examples_match_the_documented_layout() -> None:
    plan = AddressPlan(load("tiny"))
    assert plan.switch_usid("p0-t0-0") == 0x0400
    assert plan.switch_usid("p0-t1-1") == 0x0801
    assert plan.switch_usid("p1-t0-1") == 0x1401
    assert plan.switch_usid("p1-t1-0") == 0x1800
    assert plan.downlink_usid("p0-t0-1", 1) == 0xE000
    assert plan.downlink_usid("p1-t0-0", 2) == 0xE201
    scale = AddressPlan(paper_scale())
    assert scale.switch_usid("p7-t0-511") == 0x75FF
    assert scale.switch_usid("p7-t1-255") == 0x78FF
    assert scale.downlink_usid("p7-t0-3", 256) == 0xEEFF


def test_downlink_usids_never_collide_with_switch_usids_and_carry_the_plane() -> None:
    switch_usids = {PLAN.switch_usid(s) for s in PLAN.topology.switches}
    for sw in PLAN.topology.switches:
        if sw.role is Role.T0:
            downlinks = [PLAN.downlink_usid(sw, port) for port in sw.downlinks]
            assert len(set(downlinks)) == len(downlinks)
            assert not switch_usids & set(downlinks)
            for k, usid in enumerate(downlinks):
                assert usid >= LIB_START
                assert decode_usid(usid)[1:4] == ("downlink", sw.plane, k)


def test_locator_and_switch_address() -> None:
    plan = AddressPlan(load("tiny"))
    assert plan.locator("p1-t1-0") == 0xFCBB_BB00_1800
    assert plan.switch_address("p1-t1-0") == IPv6Address("fcbb:bb00:1800::")
    other = AddressPlan(load("tiny"), block="fcbb:aa00::/32")
    assert other.switch_address("p1-t1-0") == IPv6Address("fcbb:aa00:1800::")


def test_nic_addresses_and_macs_are_unique_and_reversible() -> None:
    addresses, macs = set(), set()
    for nic in PLAN.topology.nics:
        for plane in range(PLAN.topology.plane_count):
            address = PLAN.nic_address(nic.name, plane)
            assert PLAN.nic_for_address(address) == (nic.name, plane)
            assert PLAN.nic_for_address(str(address)) == (nic.name, plane)
            assert PLAN.nic_for_address(address.packed) == (nic.name, plane)
            assert address in PLAN.nic_prefix
            assert address not in PLAN.block
            addresses.add(address)
            mac = PLAN.nic_mac(nic, plane)
            assert mac_bytes(mac)[0] == 0x02  # locally administered unicast
            macs.add(mac)
    assert len(addresses) == len(macs) == 32 * 8
    switch_macs = {PLAN.switch_mac(s) for s in PLAN.topology.switches}
    assert len(switch_macs) == PLAN.topology.switch_count
    assert not switch_macs & macs
    assert PLAN.nic_address("nic5", 3) == IPv6Address("fd6d:7263:0:3::5")
    assert PLAN.nic_mac("nic5", 3) == "02:03:00:00:00:05"
    assert PLAN.switch_mac("p1-t1-2") == "0a:00:00:00:18:02"


def test_nic_for_address_rejects_foreign_addresses() -> None:
    with pytest.raises(AddressingError, match="is outside the NIC prefix fd6d:7263::/48"):
        PLAN.nic_for_address("fcbb:bb00::1")
    with pytest.raises(UnknownNameError, match="fd6d:7263:0:8::1 is not the address of a NIC port"):
        PLAN.nic_for_address("fd6d:7263:0:8::1")
    with pytest.raises(UnknownNameError, match="is not the address of a NIC port"):
        PLAN.nic_for_address("fd6d:7263:0:1::20")
    with pytest.raises(AddressingError, match="an IPv6 address is 16 bytes, got 3"):
        PLAN.nic_for_address(b"abc")
    with pytest.raises(AddressingError, match="'zz' is not an IPv6 address"):
        PLAN.nic_for_address("zz")
    with pytest.raises(AddressingError, match="-1 is not an IPv6 address"):
        PLAN.nic_for_address(-1)
    with pytest.raises(AddressingError, match="is not a MAC address"):
        mac_bytes("02:00")


def test_carrier_layout_via_a_t1_and_within_a_t0() -> None:
    plan = AddressPlan(load("tiny"))
    via = plan.path("nic0", "nic3", plane=1, t1_index=1)
    assert via.plane == 1 and via.t1 == "p1-t1-1"
    assert via.switches == ("p1-t0-0", "p1-t1-1", "p1-t0-1")
    assert via.carrier_address == IPv6Address("fcbb:bb00:1400:1801:1401:e201::")
    assert via.usids == (0x1400, 0x1801, 0x1401, 0xE201)
    assert via.carrier_bytes == via.carrier_address.packed
    local = plan.path("nic1", "nic0", plane=0, t1_index=None)
    assert local.t1 is None and local.switches == ("p0-t0-0",)
    assert local.carrier_address == IPv6Address("fcbb:bb00:400:e000::")


def test_arrival_carrier_is_what_is_left_after_the_last_shift() -> None:
    plan = AddressPlan(load("tiny"))
    assert plan.arrival_carrier("nic3", 1) == int(IPv6Address("fcbb:bb00:e201::"))


@pytest.mark.parametrize("name", ["tiny", "small", "paper-8plane"])
def test_make_ev_round_trips_through_path_for_ev(name: str) -> None:
    plan = AddressPlan(load(name))
    topo = plan.topology
    src, dst_far, dst_near = 0, topo.nic_count - 1, 1
    for plane in topo.planes:
        for t1 in range(plane.t1_count):
            for salt in (0, 1, 0xFFFF):
                ev = plan.make_ev(plane.index, t1, salt)
                assert 0 <= ev < 1 << 32
                assert plan.ev_plane(ev) == plane.index
                assert plan.ev_t1_index(ev) == t1
                assert decode_ev(ev) == (plane.index, t1, salt)
                far = plan.path_for_ev(src, dst_far, ev)
                assert (far.plane, far.t1) == (plane.index, f"p{plane.index}-t1-{t1}")
                assert far == plan.path(src, dst_far, plane.index, t1)
                near = plan.path_for_ev(src, dst_near, ev)
                assert (near.plane, near.t1, len(near.switches)) == (plane.index, None, 1)


def _path_without_memory(plan: AddressPlan, src: str, dst: str, plane: int, t1: int) -> object:
    """``plan.path`` of a plan that has computed nothing before (its memo is empty)."""
    fresh = AddressPlan(replace(plan.topology))
    return fresh.path(src, dst, plane, t1)


def test_remembered_paths_equal_freshly_computed_ones_for_every_pair_plane_and_t1() -> None:
    # AddressPlan.path keeps each path by (plane, src T0, T1, dst T0, dst downlink): a key
    # missing a field (or the wrong one) hands a NIC another NIC's path here.
    plan = AddressPlan(load("tiny"))
    topo = plan.topology
    names = [nic.name for nic in topo.nics]
    for _round in range(2):  # the second round answers from the memo
        for src in names:
            for dst in names:
                if src == dst:
                    continue
                for plane in topo.planes:
                    for t1 in range(plane.t1_count):
                        got = plan.path(src, dst, plane.index, t1)
                        want = _path_without_memory(plan, src, dst, plane.index, t1)
                        assert got == want and type(got) is type(want)
                        assert type(got.carrier) is int


def _path_written_out(plan: AddressPlan, src: str, dst: str, plane: int, t1: int) -> Path:
    """The path as ``AddressPlan._make_path`` spelt it before it kept each switch's name
    and uSID: every name formatted and every uSID computed for the call."""
    a, b = plan.topology.nic(src), plan.topology.nic(dst)
    downlink = downlink_usid_of(plane, b.downlink_index)
    dst_t0 = switch_name(plane, Role.T0, b.t0_index)
    dst_usid = node_usid(plane, Role.T0, b.t0_index)
    if a.t0_index == b.t0_index:
        return Path(plane, None, (dst_t0,), plan.carrier((dst_usid, downlink)))
    src_t0 = switch_name(plane, Role.T0, a.t0_index)
    t1_name = switch_name(plane, Role.T1, t1)
    usids = (node_usid(plane, Role.T0, a.t0_index), node_usid(plane, Role.T1, t1), dst_usid)
    return Path(plane, t1_name, (src_t0, t1_name, dst_t0), plan.carrier((*usids, downlink)))


@pytest.mark.parametrize("name", ["tiny", "small", "paper-8plane"])
def test_paths_from_kept_switch_parts_are_the_paths_written_out(name: str) -> None:
    plan = AddressPlan(load(name))
    topo = plan.topology
    nics = topo.nics[:: max(1, topo.nic_count // 24)]  # both ends under every kind of T0
    for src in nics:
        for dst in nics:
            if src.index == dst.index:
                continue
            for plane in topo.planes:
                for t1 in range(plane.t1_count):
                    got = plan.path(src.name, dst.name, plane.index, t1)
                    want = _path_written_out(plan, src.name, dst.name, plane.index, t1)
                    assert got == want and type(got.t1) is type(want.t1)
                    assert (
                        plan.path_for_ev(src.name, dst.name, plan.make_ev(plane.index, t1)) == want
                    )
    assert plan._t0_parts and all(type(k[0]) is int for k in plan._t0_parts)


def test_remembered_paths_leave_errors_unchanged() -> None:
    plan = AddressPlan(load("tiny"))
    far = plan.topology.nic_count - 1
    plan.path(0, far, 0, 0)
    with pytest.raises(AddressingError, match="T1 index 99"):
        plan.path(0, far, 0, 99)
    with pytest.raises(AddressingError, match="T1 index None"):
        plan.path(0, far, 0, None)
    with pytest.raises(AddressingError, match="cannot send to itself"):
        plan.path(far, far, 0, 0)
    with pytest.raises(UnknownNameError):
        plan.path(0, far, 99, 0)
    # an int-like argument is not confused with its int value (it is not remembered)
    assert plan.path(0, far, 0, True).t1 == "p0-t1-True"
    assert plan.path(0, far, 0, 1).t1 == "p0-t1-1"


def test_ev_bit_layout_and_udp_flow_label_split() -> None:
    plan = AddressPlan(load("tiny"))
    ev = plan.make_ev(1, 1, 0xBEEF)
    assert ev == 0x1001_BEEF
    assert split_ev(ev) == (0x1001, 0xBEEF)
    assert join_ev(0x1001, 0xBEEF) == ev
    assert join_ev(0x1001, 0xA_BEEF) == ev  # the flow label's top 4 bits are not EV bits
    assert encode_ev(15, 4095, 0xFFFF) == 0xFFFF_FFFF


@given(st.integers(min_value=0, max_value=0xFFFF_FFFF))
def test_any_32_bit_ev_maps_deterministically_to_a_valid_path(ev: int) -> None:
    plan = AddressPlan(loads(MIXED))
    path = plan.path_for_ev("nic0", "nic5", ev)
    plane, t1, _salt = decode_ev(ev)
    assert path.plane == plane % 2
    assert path.t1 == f"p{path.plane}-t1-{t1 % (2, 3)[path.plane]}"
    assert path == plan.path_for_ev("nic0", "nic5", ev)
    assert join_ev(*split_ev(ev)) == ev


MIXED = """
planes: [{t1_per_plane: 2}, {t1_per_plane: 3}]
t0_per_plane: 3
nics_per_t0: 2
"""


@pytest.mark.parametrize(
    ("name", "count"), [("tiny", 128), ("small", 256), ("paper-8plane", 128), ("paper-8plane", 200)]
)
def test_ev_set_splits_evenly_across_planes_and_t1s(name: str, count: int) -> None:
    plan = AddressPlan(load(name))
    evs = plan.ev_set(count, seed=7)
    assert len(evs) == len(set(evs)) == count
    per_plane = Counter(plan.ev_plane(ev) for ev in evs)
    assert set(per_plane) == set(range(plan.topology.plane_count))
    assert max(per_plane.values()) - min(per_plane.values()) <= 1
    per_path = Counter((plan.ev_plane(ev), plan.ev_t1_index(ev)) for ev in evs)
    for plane in plan.topology.planes:
        counts = [per_path[(plane.index, t1)] for t1 in range(plane.t1_count)]
        assert max(counts) - min(counts) <= 1
    # round-robin over planes: any window of plane_count consecutive EVs covers every plane
    planes = plan.topology.plane_count
    first = [plan.ev_plane(ev) for ev in evs[:planes]]
    assert sorted(first) == list(range(planes))


def test_ev_set_on_a_subset_of_planes_and_uneven_t1_counts() -> None:
    plan = AddressPlan(loads(MIXED))
    evs = plan.ev_set(13, planes=[1])
    assert {plan.ev_plane(ev) for ev in evs} == {1}
    assert sorted(Counter(plan.ev_t1_index(ev) for ev in evs).values()) == [4, 4, 5]
    assert plan.ev_set(4, seed=1) != plan.ev_set(4, seed=2)
    assert plan.ev_set(4, seed=1) == plan.ev_set(4, seed=1)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda p: p.make_ev(2, 0), UnknownNameError, "tiny: no plane 2 (planes are 0..1)"),
        (
            lambda p: p.make_ev(0, 2),
            AddressingError,
            "plane 0 has T1s 0..1, cannot make an EV for T1 2",
        ),
        (lambda p: p.make_ev(0, 0, 1 << 16), AddressingError, "EV salt 65536 does not fit 16 bits"),
        (
            lambda p: p.ev_plane(1 << 32),
            AddressingError,
            "EV 4294967296 is not a 32-bit unsigned integer",
        ),
        (lambda p: p.ev_plane(-1), AddressingError, "EV -1 is not a 32-bit unsigned integer"),
        (
            lambda p: p.path_for_ev("nic1", "nic1", 0),
            AddressingError,
            "nic1 cannot send to itself through the fabric",
        ),
        (
            lambda p: p.path("nic0", "nic3", 0, None),
            AddressingError,
            "plane 0 has T1s 0..1, got T1 index None",
        ),
        (
            lambda p: p.path("nic0", "nic9", 0, 0),
            UnknownNameError,
            "tiny: no NIC named 'nic9' (NICs are nic0..nic3)",
        ),
        (lambda p: p.ev_set(0), AddressingError, "an EV set needs at least 1 EV, got 0"),
        (lambda p: p.ev_set(4, planes=[]), AddressingError, "an EV set needs at least one plane"),
        (
            lambda p: p.ev_set(4, planes=[0, 0]),
            AddressingError,
            r"planes [0, 0] list a plane twice",
        ),
        (lambda p: p.ev_set(4, planes=[3]), UnknownNameError, "tiny: no plane 3 (planes are 0..1)"),
        (
            lambda p: p.ev_set(3 * 65536, planes=[0]),
            AddressingError,
            "196608 EVs on plane 0 need more than 65536 salts per path",
        ),
        (
            lambda p: p.downlink_usid("p0-t1-0", 1),
            AddressingError,
            "p0-t1-0 is a T1; only T0s have NIC downlinks",
        ),
        (
            lambda p: p.downlink_usid("p0-t0-0", 3),
            UnknownNameError,
            "p0-t0-0 port 3 is not a NIC downlink (downlinks: 1..2)",
        ),
        (
            lambda p: p.usid_switch(0xE000),
            AddressingError,
            "uSID 0xe000 is not a switch of tiny: p0 downlink 0",
        ),
        (
            lambda p: p.usid_switch(0x0402),
            AddressingError,
            "uSID 0x0402 is not a switch of tiny: no p0-t0-2",
        ),
        (
            lambda p: p.usid_switch(0x2400),
            AddressingError,
            "uSID 0x2400 is not a switch of tiny: no plane 2",
        ),
        (
            lambda p: p.usid_switch(0x0C00),
            AddressingError,
            "uSID 0x0c00 is not a switch of tiny: unassigned role bits",
        ),
        (lambda p: p.usid_switch(0x10000), AddressingError, "uSID 0x10000 is not a 16-bit value"),
        (
            lambda p: p.carrier([1] * 7),
            AddressingError,
            "7 uSIDs do not fit one carrier (at most 6)",
        ),
        (
            lambda p: p.carrier([0x400, 0]),
            AddressingError,
            "uSID 0x0 at position 1 is not a non-zero 16-bit value",
        ),
        (lambda p: encode_ev(16, 0), AddressingError, "EV plane 16 does not fit 4 bits"),
        (
            lambda p: join_ev(1 << 16, 0),
            AddressingError,
            "UDP source port 65536 is not a 16-bit value",
        ),
        (
            lambda p: join_ev(0, 1 << 20),
            AddressingError,
            "flow label 1048576 is not a 20-bit value",
        ),
        (
            lambda p: node_usid(14, Role.T0, 0),
            UsidSpaceError,
            "plane 14 does not fit the uSID plane field (0..13)",
        ),
        (
            lambda p: node_usid(0, Role.T1, 1024),
            UsidSpaceError,
            "T1 index 1024 does not fit the uSID index field (0..1023)",
        ),
    ],
)
def test_addressing_errors(call, error: type[Exception], message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as info:
        call(AddressPlan(load("tiny")))
    assert str(info.value) == message


def test_plan_rejects_bad_blocks_and_oversized_fabrics() -> None:
    tiny = load("tiny")
    with pytest.raises(AddressingError, match=r"uSID block fcbb:bb00::/48 must be a /32 prefix"):
        AddressPlan(tiny, block="fcbb:bb00::/48")
    with pytest.raises(AddressingError, match=r"uSID block 'nope' is not an IPv6 prefix"):
        AddressPlan(tiny, block="nope")
    with pytest.raises(
        AddressingError, match=r"NIC prefix fcbb:bb00:2::/48 overlaps the uSID block"
    ):
        AddressPlan(tiny, nic_prefix="fcbb:bb00:2::/48")
    huge = Topology("huge", tuple(Plane(i, 1, 1) for i in range(15)), t0_per_plane=1, nics_per_t0=1)
    with pytest.raises(UsidSpaceError) as info:
        AddressPlan(huge)
    assert str(info.value) == (
        "huge: 15 planes do not fit the 4-bit uSID plane field below the local range 0xE000 "
        "(at most 14, see docs/addressing.md)"
    )


def test_parse_carrier_names_each_usid() -> None:
    plan = AddressPlan(load("tiny"))
    path = plan.path("nic0", "nic3", 1, 0)
    info = plan.parse_carrier(path.carrier)
    assert info.in_block
    assert [u.name for u in info.usids] == ["p1-t0-0", "p1-t1-0", "p1-t0-1", "p1 downlink 1"]
    assert (
        str(info)
        == "fcbb:bb00 | 1400(p1-t0-0) | 1800(p1-t1-0) | 1401(p1-t0-1) | e201(p1 downlink 1) | end"
    )
    assert plan.parse_carrier(path.carrier_bytes) == info
    assert plan.parse_carrier(str(path.carrier_address)) == info
    odd = plan.parse_carrier("fcbb:aa00:400:0:9999::")
    assert not odd.in_block
    assert odd.after_end == (0x9999,)
    assert str(odd) == "fcbb:aa00(foreign block) | 0400(p0-t0-0) | end | garbage 9999"
    full = plan.parse_carrier("fcbb:bb00:400:401:402:403:404:405")
    assert len(full.usids) == 6 and full.usids[2].kind == "unassigned"


def test_route_count_and_routes_for_every_switch() -> None:
    for name in ("tiny", "small", "paper-8plane"):
        plan = AddressPlan(load(name))
        assert plan.route_count() == sum(len(plan.routes_for(s)) for s in plan.topology.switches)
        for sw in plan.topology.switches:
            routes = plan.routes_for(sw)
            assert len({r.usid for r in routes}) == len(routes)  # one entry per uSID
            assert sorted(r.port for r in routes) == list(sw.ports)  # every cabled port, once


def test_paper_scale_route_plan_shape() -> None:
    plan = AddressPlan(paper_scale())
    t0_routes = plan.routes_for("p7-t0-511")
    t1_routes = plan.routes_for("p7-t1-255")
    assert len(t0_routes) == 512 and len(t1_routes) == 512
    assert plan.route_count() == 8 * (512 * 512 + 256 * 512)
