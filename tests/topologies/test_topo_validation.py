"""Every way a topology description can be wrong gets a specific, key-path message."""

from __future__ import annotations

from ipaddress import IPv6Network

import pytest

from topologies import (
    AddressingSettings,
    LinkOverride,
    Plane,
    SwitchSettings,
    Topology,
    TopologyError,
    TopologySpecError,
    loads,
    two_tier,
)

BASE = "planes: 2\nt0_per_plane: 2\nt1_per_plane: 2\nnics_per_t0: 2\n"


def error_of(text: str) -> str:
    with pytest.raises(TopologySpecError) as info:
        loads(text, source="tiny.yaml")
    return str(info.value)


def test_negative_count_in_a_plane_entry_names_the_plane() -> None:
    text = (
        "planes:\n  - {}\n  - t1_per_plane: -2\nt0_per_plane: 2\nt1_per_plane: 2\nnics_per_t0: 2\n"
    )
    assert error_of(text) == "tiny.yaml: planes[1].t1_per_plane: must be a positive integer, got -2"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # shape counts
        (
            BASE.replace("planes: 2", "planes: 0"),
            "tiny.yaml: planes: must be a positive integer, got 0",
        ),
        (
            BASE.replace("planes: 2", "planes: []"),
            "tiny.yaml: planes: a fabric needs at least one plane, got an empty list",
        ),
        (
            BASE.replace("planes: 2", "planes: true"),
            "tiny.yaml: planes: must be a positive integer, got true",
        ),
        (
            BASE.replace("planes: 2", "planes: two"),
            "tiny.yaml: planes: must be a positive integer, got 'two'",
        ),
        (
            BASE.replace("planes: 2", "planes: 2.5"),
            "tiny.yaml: planes: must be a positive integer, got 2.5",
        ),
        (
            BASE.replace("t0_per_plane: 2", "t0_per_plane: -1"),
            "tiny.yaml: t0_per_plane: must be a positive integer, got -1",
        ),
        (
            BASE.replace("nics_per_t0: 2", "nics_per_t0:"),
            "tiny.yaml: nics_per_t0: must be a positive integer, got nothing (null)",
        ),
        (
            BASE.replace("t1_per_plane: 2\n", ""),
            "tiny.yaml: t1_per_plane: missing (required when planes is a count)",
        ),
        (BASE.replace("t0_per_plane: 2\n", ""), "tiny.yaml: t0_per_plane: missing (required)"),
        (BASE.replace("planes: 2\n", ""), "tiny.yaml: planes: missing (required)"),
        (
            "planes: [{}, {t1_per_plane: 1}]\nt0_per_plane: 2\nnics_per_t0: 2\n",
            "tiny.yaml: planes[0].t1_per_plane: missing: give it here or as a top-level t1_per_plane",
        ),
        (
            BASE.replace("planes: 2", "planes: [{t0_per_plane: 3}]"),
            "tiny.yaml: planes[0].t0_per_plane: unknown key (did you mean 't1_per_plane'? allowed here: t1_per_plane, link_defaults)",
        ),
        (
            BASE.replace("planes: 2", "planes: [3]"),
            "tiny.yaml: planes[0]: must be a mapping, got 3",
        ),
        # document shape and unknown keys
        ("- 1\n- 2\n", "tiny.yaml: (top level): must be a mapping, got a list"),
        ("", "tiny.yaml: (top level): the document is empty; expected a mapping"),
        (
            BASE + "nics_per_tO: 3\n",
            "tiny.yaml: nics_per_tO: unknown key (did you mean 'nics_per_t0'? allowed here: name, description, planes, t0_per_plane, t1_per_plane, nics_per_t0, link_defaults, switches, addressing, links)",
        ),
        (
            BASE + "link_defaults: {latency_us: 3}\n",
            "tiny.yaml: link_defaults.latency_us: unknown key (did you mean 'delay_us'? allowed here: rate_gbps, delay_us, queue_packets)",
        ),
        (BASE + "name: ''\n", "tiny.yaml: name: must be a non-empty string, got ''"),
        (BASE + "planes: 3\n", "tiny.yaml: line 5: duplicate key 'planes'"),
        # link parameters
        (
            BASE + "link_defaults: {rate_gbps: 0}\n",
            "tiny.yaml: link_defaults.rate_gbps: must be a positive number, got 0",
        ),
        (
            BASE + "link_defaults: {delay_us: -1}\n",
            "tiny.yaml: link_defaults.delay_us: must be a non-negative number, got -1",
        ),
        (
            BASE + "link_defaults: {delay_us: .inf}\n",
            "tiny.yaml: link_defaults.delay_us: must be a non-negative number, got inf",
        ),
        (
            BASE + "link_defaults: {queue_packets: 0}\n",
            "tiny.yaml: link_defaults.queue_packets: must be a positive integer, got 0",
        ),
        (
            BASE + "link_defaults: {queue_packets: 1.5}\n",
            "tiny.yaml: link_defaults.queue_packets: must be a positive integer, got 1.5",
        ),
        (BASE + "link_defaults: [1]\n", "tiny.yaml: link_defaults: must be a mapping, got a list"),
        # switches
        (
            BASE + "switches: {radix: 3}\n",
            "tiny.yaml: switches.radix: each T0 of plane 0 needs 4 ports (2 NIC downlinks + 2 T1 uplinks) but the radix is 3",
        ),
        (
            "planes: 1\nt0_per_plane: 5\nt1_per_plane: 1\nnics_per_t0: 1\nswitches: {radix: 4}\n",
            "tiny.yaml: switches.radix: each T1 needs 5 ports (one per T0 of its plane) but the radix is 4",
        ),
        (
            BASE + "switches: {port_bits: 2}\n",
            "tiny.yaml: switches.port_bits: p0-t0-0 needs port 4, but 2-bit port numbers stop at 2 (3 is the drop port); raise switches.port_bits",
        ),
        (
            BASE + "switches: {port_bits: 40}\n",
            "tiny.yaml: switches.port_bits: must be an integer in 2..32, got 40",
        ),
        (
            BASE + "switches: {first_port: -1}\n",
            "tiny.yaml: switches.first_port: must be a non-negative integer, got -1",
        ),
        (
            BASE + "switches: {cpu_port: 3}\n",
            "tiny.yaml: switches.cpu_port: 3 is also data port 3 of p0-t0-0 (data ports are numbered from switches.first_port=1)",
        ),
        (
            BASE + "switches: {cpu_port: 511}\n",
            "tiny.yaml: switches.cpu_port: 511 is not a 9-bit port number below the drop port 511",
        ),
        (
            BASE + "switches: {ports: 4}\n",
            "tiny.yaml: switches.ports: unknown key (did you mean 'port_bits'? allowed here: radix, port_bits, first_port, cpu_port)",
        ),
        # addressing
        (
            BASE + "addressing: {usid_block: 'fcbb:bb00::/48'}\n",
            "tiny.yaml: addressing.usid_block: must be a /32 prefix like 'fcbb:bb00::/32', got 'fcbb:bb00::/48'",
        ),
        (
            BASE + "addressing: {usid_block: 'fcbb:bb00::1/32'}\n",
            "tiny.yaml: addressing.usid_block: 'fcbb:bb00::1/32' is not an IPv6 prefix: fcbb:bb00::1/32 has host bits set",
        ),
        (
            BASE + "addressing: {usid_block: 32}\n",
            "tiny.yaml: addressing.usid_block: must be an IPv6 /32 prefix like 'fcbb:bb00::/32', got 32",
        ),
        (
            BASE + "addressing: {nic_prefix: 'fcbb:bb00:1::/48'}\n",
            "tiny.yaml: addressing.nic_prefix: fcbb:bb00:1::/48 overlaps the uSID block fcbb:bb00::/32; NIC (inner) addresses and uSID carriers (outer) must be distinguishable",
        ),
    ],
)
def test_schema_errors(text: str, expected: str) -> None:
    assert error_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "planes: 15\nt0_per_plane: 1\nt1_per_plane: 1\nnics_per_t0: 1\n",
            "tiny.yaml: planes: 15 planes do not fit the 4-bit uSID plane field below the local range 0xE000 (at most 14, see docs/addressing.md)",
        ),
        (
            "planes: 1\nt0_per_plane: 1025\nt1_per_plane: 1\nnics_per_t0: 1\n",
            "tiny.yaml: t0_per_plane: 1025 T0s per plane do not fit the 10-bit uSID index field (at most 1024, see docs/addressing.md)",
        ),
        (
            "planes: [{}, {t1_per_plane: 1025}]\nt0_per_plane: 1\nt1_per_plane: 1\nnics_per_t0: 1\n",
            "tiny.yaml: planes[1].t1_per_plane: 1025 T1s per plane do not fit the 10-bit uSID index field (at most 1024, see docs/addressing.md)",
        ),
        (
            "planes: 1\nt0_per_plane: 1\nt1_per_plane: 1025\nnics_per_t0: 1\n",
            "tiny.yaml: t1_per_plane: 1025 T1s per plane do not fit the 10-bit uSID index field (at most 1024, see docs/addressing.md)",
        ),
        (
            "planes: 1\nt0_per_plane: 1\nt1_per_plane: 1\nnics_per_t0: 513\n",
            "tiny.yaml: nics_per_t0: 513 NICs per T0 do not fit the 9-bit downlink uSID field (at most 512, see docs/addressing.md)",
        ),
    ],
)
def test_usid_space_overflow(text: str, expected: str) -> None:
    assert error_of(text) == expected


def links(body: str) -> str:
    return BASE + "links:\n" + body


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "  - {delay_us: 2}\n",
            "tiny.yaml: links[0].between: missing: name the link's two endpoints",
        ),
        (
            "  - {between: [p0-t0-0], delay_us: 2}\n",
            "tiny.yaml: links[0].between: must be a list of two node names like [p0-t0-0, p0-t1-1], got a list",
        ),
        (
            "  - {between: p0-t0-0, delay_us: 2}\n",
            "tiny.yaml: links[0].between: must be a list of two node names like [p0-t0-0, p0-t1-1], got 'p0-t0-0'",
        ),
        (
            "  - {between: [p0-t0-0, p0-t1-0], latency: 2}\n",
            "tiny.yaml: links[0].latency: unknown key (allowed here: between, rate_gbps, delay_us, queue_packets, uplink_index)",
        ),
        (
            "  - {between: [p0-t0-0, p0-t1-0]}\n",
            "tiny.yaml: links[0]: sets nothing: give rate_gbps, delay_us, queue_packets or uplink_index",
        ),
        # dangling: endpoints that do not exist
        (
            "  - {between: [p0-t0-0, spine1], delay_us: 2}\n",
            "tiny.yaml: links[0].between: no switch or NIC named 'spine1' (switches are p<plane>-t0-<i> and p<plane>-t1-<i>, NICs nic<i>)",
        ),
        (
            "  - {between: [p0-t0-0, p0-t1-7], delay_us: 2}\n",
            "tiny.yaml: links[0].between: no switch named 'p0-t1-7' (plane 0 has T1s p0-t1-0..p0-t1-1)",
        ),
        (
            "  - {between: [p2-t0-0, p2-t1-0], delay_us: 2}\n",
            "tiny.yaml: links[0].between: no switch named 'p2-t0-0' (planes are 0..1)",
        ),
        (
            "  - {between: [nic9, p0-t0-0], delay_us: 2}\n",
            "tiny.yaml: links[0].between: no NIC named 'nic9' (NICs are nic0..nic3)",
        ),
        (
            "  - {between: [p0-t0-01, p0-t1-0], delay_us: 2}\n",
            "tiny.yaml: links[0].between: no switch or NIC named 'p0-t0-01' (switches are p<plane>-t0-<i> and p<plane>-t1-<i>, NICs nic<i>)",
        ),
        # override naming a link that does not exist
        (
            "  - {between: [nic3, p0-t0-0], delay_us: 2}\n",
            "tiny.yaml: links[0].between: there is no link nic3 -- p0-t0-0: nic3 attaches to T0 index 1 (p0-t0-1 in plane 0)",
        ),
        (
            "  - {between: [nic0, p0-t1-0], delay_us: 2}\n",
            "tiny.yaml: links[0].between: there is no link nic0 -- p0-t1-0: NICs attach only to T0 switches",
        ),
        (
            "  - {between: [p0-t0-0, p0-t0-1], delay_us: 2}\n",
            "tiny.yaml: links[0].between: there is no link p0-t0-0 -- p0-t0-1: two T0 switches are never linked (T0s link only to T1s)",
        ),
        (
            "  - {between: [nic0, nic1], delay_us: 2}\n",
            "tiny.yaml: links[0].between: there is no link nic0 -- nic1: NICs are never linked to each other",
        ),
        (
            "  - {between: [p0-t0-0, p0-t0-0], delay_us: 2}\n",
            "tiny.yaml: links[0].between: names 'p0-t0-0' twice; a link joins two different nodes",
        ),
        # planes are disjoint
        (
            "  - {between: [p0-t0-0, p1-t1-0], delay_us: 2}\n",
            "tiny.yaml: links[0].between: p0-t0-0 is in plane 0 and p1-t1-0 in plane 1; planes are disjoint networks and no link joins two planes",
        ),
        # duplicates
        (
            "  - {between: [p0-t0-0, p0-t1-0], delay_us: 2}\n  - {between: [p0-t1-0, p0-t0-0], rate_gbps: 10}\n",
            "tiny.yaml: links[1].between: duplicate override of link p0-t0-0 -- p0-t1-0 (already set by links[0])",
        ),
        # uplink index
        (
            "  - {between: [nic0, p0-t0-0], uplink_index: 1}\n",
            "tiny.yaml: links[0].uplink_index: only T0-T1 links have an uplink index; nic0 -- p0-t0-0 is a NIC link",
        ),
        (
            "  - {between: [p0-t0-0, p0-t1-0], uplink_index: -1}\n",
            "tiny.yaml: links[0].uplink_index: must be a non-negative integer, got -1",
        ),
        (
            "  - {between: [p0-t0-0, p0-t1-0], uplink_index: 1}\n",
            "tiny.yaml: links[0].uplink_index: uplink 1 of p0-t0-0 would lead to both p0-t1-0 and p0-t1-1; every T1 needs its own uplink (give the other link an uplink_index too)",
        ),
        (
            "  - {between: [p0-t0-0, p0-t1-0], uplink_index: 5}\n  - {between: [p0-t0-0, p0-t1-1], uplink_index: 5}\n",
            "tiny.yaml: links[1].uplink_index: uplink 5 of p0-t0-0 would lead to both p0-t1-0 and p0-t1-1; every T1 needs its own uplink (give the other link an uplink_index too)",
        ),
        (
            "  - {between: [p0-t0-0, p0-t1-0], uplink_index: 600}\n",
            "tiny.yaml: switches.radix: p0-t0-0 uplink index 600 puts a port at 603, beyond the radix (512 ports numbered 1..512)",
        ),
        ("links: 3\n", None),
    ],
)
def test_link_override_errors(body: str, expected: str | None) -> None:
    if expected is None:  # the links key itself is malformed
        assert error_of(BASE + body) == "tiny.yaml: links: must be a list of link overrides, got 3"
        return
    assert error_of(links(body)) == expected


def test_uplink_index_beyond_the_port_space_is_reported() -> None:
    text = (
        BASE
        + "switches: {radix: 600}\nlinks:\n  - {between: [p0-t0-0, p0-t1-0], uplink_index: 520}\n"
    )
    assert error_of(text) == (
        "tiny.yaml: switches.port_bits: p0-t0-0 needs port 523, but 9-bit port numbers stop at "
        "510 (511 is the drop port); raise switches.port_bits"
    )


def test_cpu_port_colliding_with_an_overridden_uplink_is_reported() -> None:
    text = (
        BASE
        + "switches: {cpu_port: 100}\nlinks:\n  - {between: [p1-t0-1, p1-t1-0], uplink_index: 97}\n"
    )
    assert error_of(text) == (
        "tiny.yaml: switches.cpu_port: 100 is also data port 100 of p1-t0-1 (data ports are "
        "numbered from switches.first_port=1)"
    )


def test_generators_report_bad_arguments_like_a_file() -> None:
    with pytest.raises(TopologySpecError) as info:
        two_tier(2, 2, -2, 2)
    assert str(info.value) == "two_tier(): t1_per_plane: must be a positive integer, got -2"
    with pytest.raises(TopologySpecError, match=r"two_tier\(\): links\[0\]\.between: no NIC"):
        two_tier(1, 1, 1, 1, links=[{"between": ["nic5", "p0-t0-0"], "delay_us": 1}])


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(TopologySpecError) as info:
        Topology("t", (Plane(0, 2, 1), Plane(1, 3, 1)), t0_per_plane=2, nics_per_t0=1)
    assert str(info.value) == (
        "<topology>: planes[1].t0_per_plane: every plane must have the same 2 T0s (NIC i "
        "attaches to T0 i // nics_per_t0 in every plane), got 3"
    )
    with pytest.raises(TopologySpecError, match=r"planes\[0\]: plane index 1 is out of order"):
        Topology("t", (Plane(1, 1, 1),), t0_per_plane=1, nics_per_t0=1)
    with pytest.raises(TopologySpecError, match=r"planes: a fabric needs at least one plane"):
        Topology("t", (), t0_per_plane=1, nics_per_t0=1)
    with pytest.raises(TopologySpecError, match=r"planes\[0\]\.t1_per_plane: must be a positive"):
        Topology("t", (Plane(0, 1, 0),), t0_per_plane=1, nics_per_t0=1)
    with pytest.raises(TopologySpecError, match=r"nics_per_t0: must be a positive integer, got 0"):
        Topology("t", (Plane(0, 1, 1),), t0_per_plane=1, nics_per_t0=0)
    with pytest.raises(TopologySpecError, match=r"switches\.first_port"):
        Topology("t", (Plane(0, 1, 1),), 1, 1, switch_settings=SwitchSettings(first_port=-3))
    with pytest.raises(TopologySpecError, match=r"links\[0\]\.between: must name exactly 2"):
        Topology("t", (Plane(0, 1, 1),), 1, 1, overrides=(LinkOverride(("nic0",), 1.0),))  # type: ignore[arg-type]


def test_every_error_is_a_topology_error() -> None:
    assert issubclass(TopologySpecError, TopologyError)
    settings = AddressingSettings(IPv6Network("fcbb:bb00::/32"))
    assert settings.nic_prefix.prefixlen == 48
