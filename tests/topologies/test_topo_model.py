"""The derived model: names, port numbering, links, lookups, and scale."""

from __future__ import annotations

from dataclasses import replace

import pytest

from topologies import (
    Endpoint,
    LinkKind,
    LinkParams,
    Role,
    Topology,
    UnknownNameError,
    load,
    loads,
    paper_scale,
    two_tier,
)

OVERRIDES = """
name: overrides
planes:
  - {}
  - t1_per_plane: 3
    link_defaults: {delay_us: 4}
t0_per_plane: 3
t1_per_plane: 2
nics_per_t0: 2
link_defaults: {rate_gbps: 25, delay_us: 1, queue_packets: 16}
switches: {first_port: 5, cpu_port: 200}
links:
  - between: [p0-t0-1, p0-t1-0]
    uplink_index: 1
  - between: [p0-t0-1, p0-t1-1]
    uplink_index: 0
  - between: [p1-t0-2, p1-t1-1]
    uplink_index: 7
    queue_packets: 99
  - between: [p1-t0-2, nic5]
    rate_gbps: 10
"""


def topologies_under_test() -> list[Topology]:
    return [load("tiny"), load("small"), load("paper-8plane"), loads(OVERRIDES)]


def test_switch_names_and_order_are_derived() -> None:
    topo = load("tiny")
    assert [s.name for s in topo.switches] == [
        "p0-t0-0", "p0-t0-1", "p0-t1-0", "p0-t1-1",
        "p1-t0-0", "p1-t0-1", "p1-t1-0", "p1-t1-1",
    ]  # fmt: skip
    assert [n.name for n in topo.nics] == ["nic0", "nic1", "nic2", "nic3"]
    sw = topo.switch("p1-t1-0")
    assert (sw.role, sw.plane, sw.index) == (Role.T1, 1, 0)
    assert topo.t0(1, 1).name == "p1-t0-1"
    assert topo.t1(0, 1).name == "p0-t1-1"
    assert topo.plane(1).t0_names() == ["p1-t0-0", "p1-t0-1"]
    assert topo.plane(1).t1_names() == ["p1-t1-0", "p1-t1-1"]


def test_default_port_numbering() -> None:
    topo = load("paper-8plane")  # 4 NICs and 4 T1s per T0, 8 T0s per T1
    t0 = topo.switch("p3-t0-5")
    assert list(t0.downlinks) == [1, 2, 3, 4]
    assert list(t0.uplinks) == [5, 6, 7, 8]
    assert t0.ports == (1, 2, 3, 4, 5, 6, 7, 8)
    t1 = topo.switch("p3-t1-2")
    assert list(t1.downlinks) == list(range(1, 9))
    assert t1.uplinks == ()
    assert topo.switch_settings.cpu_port == 510
    assert topo.switch_settings.drop_port == 511


def test_overridden_uplinks_and_first_port() -> None:
    topo = loads(OVERRIDES)
    # first_port 5: downlinks 5,6; uplinks from 7 by uplink index
    assert list(topo.switch("p0-t0-0").uplinks) == [7, 8]
    assert list(topo.switch("p0-t0-1").uplinks) == [8, 7]  # swapped cabling
    assert list(topo.switch("p1-t0-2").uplinks) == [7, 14, 9]
    assert topo.switch("p1-t0-2").ports == (5, 6, 7, 9, 14)
    assert topo.peer("p1-t0-2", 14) == Endpoint("p1-t1-1", 7)
    assert topo.peer("p1-t1-1", 7) == Endpoint("p1-t0-2", 14)
    assert topo.peer("p0-t0-1", 7) == Endpoint("p0-t1-1", 6)
    assert topo.uplink_index(0, 1, 0) == 1


def test_link_parameters_merge_defaults_plane_and_override() -> None:
    topo = loads(OVERRIDES)
    plain = topo.link("nic0", "p0-t0-0")
    assert (plain.rate_gbps, plain.delay_us, plain.queue_packets) == (25.0, 1.0, 16)
    plane1 = topo.link("p1-t1-0", "p1-t0-0")
    assert (plane1.rate_gbps, plane1.delay_us, plane1.queue_packets) == (25.0, 4.0, 16)
    queue = topo.link("p1-t0-2", "p1-t1-1")
    assert (queue.rate_gbps, queue.delay_us, queue.queue_packets) == (25.0, 4.0, 99)
    rate = topo.link("nic5", "p1-t0-2")
    assert (rate.rate_gbps, rate.delay_us, rate.queue_packets) == (10.0, 4.0, 16)
    assert topo.link("nic5", "p0-t0-2").rate_gbps == 25.0  # override is per plane's link


@pytest.mark.parametrize("topo", topologies_under_test(), ids=lambda t: t.name)
def test_every_link_is_consistent_with_peer_and_links_of(topo: Topology) -> None:
    seen_ports: set[tuple[str, int]] = set()
    links = list(topo.links())
    assert len(links) == topo.link_count
    for link in links:
        assert topo.peer(link.a.node, link.a.port) == link.b
        assert topo.peer(link.b.node, link.b.port) == link.a
        assert link in topo.links_of(link.a.node)
        assert link in topo.links_of(link.b.node)
        assert topo.link(link.b.node, link.a.node) == link
        for end in (link.a, link.b):
            assert (end.node, end.port) not in seen_ports, f"port used twice: {end}"
            seen_ports.add((end.node, end.port))
        lower, upper = topo_nodes(topo, link.a.node), topo_nodes(topo, link.b.node)
        if link.kind is LinkKind.ACCESS:
            assert lower == ("nic", None) and upper == ("t0", link.plane)
        else:
            assert lower == ("t0", link.plane) and upper == (
                "t1",
                link.plane,
            )  # never crosses planes
    for sw in topo.switches:
        assert sorted(port for node, port in seen_ports if node == sw.name) == list(sw.ports)
        assert len(sw.ports) <= topo.switch_settings.radix
        assert topo.switch_settings.cpu_port not in sw.ports
        assert all(0 < port < topo.switch_settings.drop_port for port in sw.ports)


def topo_nodes(topo: Topology, name: str) -> tuple[str, int | None]:
    if name.startswith("nic"):
        return "nic", None
    sw = topo.switch(name)
    return sw.role.value, sw.plane


@pytest.mark.parametrize("topo", topologies_under_test(), ids=lambda t: t.name)
def test_every_nic_attaches_to_the_same_t0_index_in_every_plane(topo: Topology) -> None:
    for nic in topo.nics:
        assert nic.t0_index == nic.index // topo.nics_per_t0
        links = topo.links_of(nic.name)
        assert [link.plane for link in links] == list(range(topo.plane_count))
        for plane, link in enumerate(links):
            port = topo.nic_port(nic.name, plane)
            assert port.t0 == f"p{plane}-t0-{nic.t0_index}"
            assert link.b == Endpoint(port.t0, port.t0_port)
            assert link.a == Endpoint(nic.name, plane)
            assert port.t0_port == topo.downlink_port(nic.name)
            assert topo.peer(nic.name, plane) == link.b
        assert nic.index in topo.nics_under(nic.t0_index)


def test_links_of_a_t0_lists_downlinks_then_uplinks_in_port_order() -> None:
    topo = loads(OVERRIDES)
    ports = [link.endpoint("p1-t0-2").port for link in topo.links_of("p1-t0-2")]
    assert ports == [5, 6, 7, 9, 14]
    assert [link.other("p1-t0-2").node for link in topo.links_of("p1-t0-2")] == [
        "nic4", "nic5", "p1-t1-0", "p1-t1-2", "p1-t1-1",
    ]  # fmt: skip


def test_nic_sequence_is_lazy_and_indexable() -> None:
    topo = load("small")
    nics = topo.nics
    assert len(nics) == 8
    assert nics[-1].name == "nic7"
    assert [n.name for n in nics[2:5]] == ["nic2", "nic3", "nic4"]
    assert topo.nic("nic6") == topo.nic(6) == nics[6]
    assert (nics[5].t0_index, nics[5].downlink_index) == (2, 1)
    with pytest.raises(IndexError):
        nics[8]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda t: t.switch("leaf1"),
            "tiny: no switch named 'leaf1' (switches are p<plane>-t0-<i> and p<plane>-t1-<i>)",
        ),
        (
            lambda t: t.switch("nic0"),
            "tiny: no switch named 'nic0' (switches are p<plane>-t0-<i> and p<plane>-t1-<i>)",
        ),
        (
            lambda t: t.switch("p0-t1-2"),
            "tiny: no switch named 'p0-t1-2' (plane 0 has T1s p0-t1-0..p0-t1-1)",
        ),
        (lambda t: t.switch("p2-t0-0"), "tiny: no switch named 'p2-t0-0' (planes are 0..1)"),
        (lambda t: t.nic("nic4"), "tiny: no NIC named 'nic4' (NICs are nic0..nic3)"),
        (lambda t: t.nic(-1), "tiny: no NIC with index -1 (NICs are nic0..nic3)"),
        (lambda t: t.nic("p0-t0-0"), "tiny: no NIC named 'p0-t0-0' (NICs are nic<i>)"),
        (lambda t: t.plane(2), "tiny: no plane 2 (planes are 0..1)"),
        (lambda t: t.nic_port("nic0", 5), "tiny: no plane 5 (planes are 0..1)"),
        (lambda t: t.peer("p0-t0-0", 0), "tiny: p0-t0-0 has no link on port 0 (ports: 1..4)"),
        (lambda t: t.peer("p0-t0-0", 5), "tiny: p0-t0-0 has no link on port 5 (ports: 1..4)"),
        (lambda t: t.peer("p0-t1-0", 3), "tiny: p0-t1-0 has no link on port 3 (ports: 1..2)"),
        (lambda t: t.peer("nic0", 2), "tiny: nic0 has no port 2 (its ports are planes 0..1)"),
        (lambda t: t.link("p0-t0-0", "p1-t1-0"), "tiny: there is no link p0-t0-0 -- p1-t1-0"),
        (lambda t: t.link("nic3", "p0-t0-0"), "tiny: there is no link nic3 -- p0-t0-0"),
        (
            lambda t: t.link("nic0", "p0-t0-9"),
            "tiny: no switch named 'p0-t0-9' (plane 0 has T0s p0-t0-0..p0-t0-1)",
        ),
        (
            lambda t: t.links_of("spine"),
            "tiny: no switch or NIC named 'spine' (switches are p<plane>-t0-<i> and p<plane>-t1-<i>, NICs nic<i>)",
        ),
        (lambda t: t.nics_under(2), "tiny: no T0 index 2 (0..1)"),
        (
            lambda t: t.link("nic0", "p0-t0-0").endpoint("nic1"),
            "link nic0:0 -- p0-t0-0:1 does not touch 'nic1'",
        ),
    ],
)
def test_lookups_of_missing_things_fail_clearly(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnknownNameError) as info:
        call(load("tiny"))
    assert str(info.value) == message


def test_has_node() -> None:
    topo = load("tiny")
    assert topo.has_node("nic3") and topo.has_node("p1-t1-1")
    assert not topo.has_node("nic4") and not topo.has_node("p1-t2-0") and not topo.has_node("x")


def test_generator_matches_the_bundled_file() -> None:
    generated = two_tier(2, 2, 2, 2, name="tiny", links=())
    bundled = load("tiny")
    assert list(generated.links()) == list(bundled.links())
    assert generated.switches == bundled.switches
    assert generated.planes == bundled.planes
    assert generated.switch_settings == bundled.switch_settings
    assert generated.addressing == bundled.addressing


def test_generator_passes_link_parameters_and_overrides() -> None:
    topo = two_tier(
        1, 2, 2, 1,
        rate_gbps=40, delay_us=0.5, queue_packets=8, radix=8, port_bits=10, first_port=0,
        cpu_port=1000, usid_block="fcbb:aa00::/32", nic_prefix="fd00:9::/48",
        links=[{"between": ["p0-t0-0", "p0-t1-0"], "delay_us": 3}],
    )  # fmt: skip
    assert topo.planes[0].link_defaults == LinkParams(40.0, 0.5, 8)
    assert topo.link("p0-t0-0", "p0-t1-0").delay_us == 3.0
    assert topo.switch("p0-t0-0").ports == (0, 1, 2)
    assert topo.switch_settings.cpu_port == 1000
    assert str(topo.addressing.usid_block) == "fcbb:aa00::/32"


def test_paper_scale_fabric_is_built_compactly() -> None:
    topo = paper_scale()
    assert topo.plane_count == 8
    assert topo.switch_count == 6144
    assert topo.nic_count == 131_072
    assert topo.link_count == 8 * (131_072 + 512 * 256)
    t0 = topo.switch("p7-t0-511")
    assert (len(t0.downlinks), len(t0.uplinks)) == (256, 256)
    assert t0.ports == tuple(range(1, 513))
    assert len(topo.switch("p7-t1-255").downlinks) == 512
    assert topo.switch_settings.cpu_port == 1022
    assert topo.peer("p7-t0-511", 512) == Endpoint("p7-t1-255", 512)
    assert topo.peer("nic131071", 7) == Endpoint("p7-t0-511", 256)
    assert len(topo.links_of("p3-t0-7")) == 512
    assert topo.nics[131_071].t0_index == 511


def test_summary_describes_the_shape() -> None:
    assert load("tiny").summary() == (
        "tiny: 2 planes x (2 T0 + 2 T1), 4 NICs (2 per T0), 8 switches, 16 links"
    )
    assert (
        loads(OVERRIDES).summary().startswith("overrides: 2 planes x (3 T0 + 2 T1 / 3 T0 + 3 T1)")
    )


def test_nic_lookup_by_name_is_remembered_per_topology_and_errors_stay() -> None:
    # Topology.nic keeps name -> Nic per topology: another topology (here another shape
    # made by dataclasses.replace) must not see this one's answers.
    topo = load("tiny")
    first = topo.nic("nic3")
    assert topo.nic("nic3") == first == topo.nic(3)
    assert (first.t0_index, first.downlink_index) == divmod(3, topo.nics_per_t0)
    other = replace(topo, nics_per_t0=topo.nics_per_t0 + 1)
    again = other.nic("nic3")
    assert (again.t0_index, again.downlink_index) == divmod(3, other.nics_per_t0)
    assert again != first
    for bad in ("nic03", f"nic{topo.nic_count}", "p0-t0-0", "nic3 "):
        with pytest.raises(UnknownNameError):
            topo.nic(bad)
        with pytest.raises(UnknownNameError):
            topo.nic(bad)
