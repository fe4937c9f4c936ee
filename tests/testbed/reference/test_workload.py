"""The workload description of the htsim differential: shapes, flows, errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mrc_wire.queues import queue_thresholds
from testbed.reference import suites
from testbed.reference.exceptions import WorkloadError
from testbed.reference.vfside import nic_name, topology
from testbed.reference.workload import (
    ACK_FRAME_BYTES,
    DATA_FRAME_BYTES,
    MIB,
    Flow,
    Workload,
    bdp_packets,
    check_flows,
    end_us,
    fat_tree_k,
    from_mapping,
    load,
    parse_size,
    victim_only,
)
from vfabric import VirtualFabric


def perm(hosts: int = 32, seed: int = 1) -> Workload:
    return Workload("p", hosts, "permutation", 4 * MIB, seed=seed)


def incast(
    fan_in: int = 7, victim: bool = True, hosts: int = 32, seed: int = 1, victim_start_us: int = 0
) -> Workload:
    return Workload(
        "i",
        hosts,
        "incast",
        2 * MIB,
        seed=seed,
        fan_in=fan_in,
        victim=victim,
        victim_start_us=victim_start_us,
    )


@pytest.mark.parametrize(("hosts", "k"), [(8, 4), (18, 6), (32, 8), (72, 12), (128, 16)])
def test_fat_tree_sizes(hosts: int, k: int) -> None:
    assert fat_tree_k(hosts) == k
    shape = perm(hosts).shape
    assert (shape.k, shape.hosts_per_t0) == (k, k // 2)


def test_shape_of_32_hosts_is_the_one_both_sides_get() -> None:
    shape = perm().shape
    # one BDP: 4 hops x (2 x 1 us + (4230 + 146) B at 100 Gb/s) = 9.40 us -> 27.8 packets
    assert bdp_packets(100.0, 1.0) == 28
    assert (shape.trim_packets, shape.queue_packets) == (28, 37)
    thresholds = queue_thresholds(37)
    assert thresholds.trim_qdepth == 28
    assert (shape.ecn_low_packets, shape.ecn_high_packets) == (6, 22)
    assert shape.data_frame_bytes == DATA_FRAME_BYTES == 4230
    assert Workload("p", 32, "permutation", 1, trim_packets=12).shape.trim_packets == 12
    assert shape.base_rtt_ns == 9400  # the same RTT as the BDP's
    assert Workload("p", 32, "permutation", 1, base_rtt_ns=12_000).shape.base_rtt_ns == 12_000


def test_topology_is_htsims_fat_tree_and_host_map() -> None:
    shape = perm().shape
    topo = topology(shape)
    assert (len(topo.planes), len(topo.nics)) == (1, 32)
    t0s = [s for s in topo.switches if s.name.startswith("p0-t0-")]
    t1s = [s for s in topo.switches if s.name.startswith("p0-t1-")]
    assert (len(t0s), len(t1s)) == (8, 4)
    for host in (0, 3, 4, 31):
        (link,) = topo.links_of(nic_name(host))
        assert link.b.node == f"p0-t0-{shape.t0_of(host)}" or link.a.node == (
            f"p0-t0-{shape.t0_of(host)}"
        )
    link = topo.links_of("nic0")[0]
    assert (link.rate_gbps, link.delay_us, link.queue_packets) == (100.0, 1.0, 37)


def test_frame_sizes_are_what_the_virtual_fabric_puts_on_the_wire() -> None:
    shape = Workload("p", 8, "permutation", 1).shape
    fabric = VirtualFabric(topology(shape), seed=1)
    fabric.transfer("nic0", "nic7", 3 * 4096)
    assert fabric.run()
    links = fabric.link_counters()
    up = links["nic0->p0-t0-0"]
    assert up["tx_bytes"] == up["tx_packets"] * DATA_FRAME_BYTES
    down = links["nic7->p0-t0-3"]
    assert down["tx_bytes"] == down["tx_packets"] * ACK_FRAME_BYTES


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_permutation_is_a_derangement_drawn_from_the_seed(seed: int) -> None:
    flows = perm(32, seed).flows()
    assert [f.src for f in flows] == list(range(32))
    assert sorted(f.dst for f in flows) == list(range(32))
    assert all(f.src != f.dst for f in flows)
    assert [f.id for f in flows] == list(range(1, 33))
    assert perm(32, seed).flows() == flows
    assert perm(32, seed + 10).flows() != flows


def test_all_to_all() -> None:
    flows = Workload("a", 8, "all_to_all", 1024).flows()
    assert len(flows) == 56
    assert {(f.src, f.dst) for f in flows} == {(s, d) for s in range(8) for d in range(8) if s != d}


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("hosts", "fan_in"), [(8, 5), (32, 7), (32, 29), (128, 31)])
def test_incast_with_victim(seed: int, hosts: int, fan_in: int) -> None:
    w = incast(fan_in, victim=True, hosts=hosts, seed=seed)
    flows = w.flows()
    senders = [f for f in flows if f.role == "incast"]
    (victim,) = [f for f in flows if f.role == "victim"]
    receiver = senders[0].dst
    assert len(senders) == fan_in and {f.dst for f in senders} == {receiver}
    assert len({f.src for f in senders}) == fan_in and receiver not in {f.src for f in senders}
    assert victim.size == 2 * w.size_bytes
    shape = w.shape
    assert shape.t0_of(victim.dst) == shape.t0_of(receiver) and victim.dst != receiver
    assert victim.src not in {f.src for f in senders} | {receiver}
    if fan_in <= hosts - shape.hosts_per_t0 - 1:
        assert shape.t0_of(victim.src) != shape.t0_of(receiver)
        assert all(shape.t0_of(f.src) != shape.t0_of(receiver) for f in senders)
    assert victim_only(w) == [victim]
    check_flows(hosts, flows)


@pytest.mark.parametrize(
    ("make", "key", "words"),
    [
        (lambda: Workload("x", 30, "permutation", 1), "hosts", "K²/2"),
        (lambda: Workload("x", 4, "permutation", 1), "hosts", "K²/2"),
        (lambda: Workload("x", 32, "shuffle", 1), "traffic", "unknown kind"),
        (lambda: Workload("x", 32, "permutation", 0), "size_bytes", "at least 1"),
        (lambda: Workload("x", 32, "permutation", 1, fan_in=3), "fan_in", "only an incast"),
        (lambda: Workload("x", 32, "permutation", 1, victim=True), "victim", "only an incast"),
        (lambda: Workload("x", 32, "incast", 1), "fan_in", "needs fan_in"),
        (lambda: Workload("x", 32, "incast", 1, fan_in=31, victim=True), "fan_in", "do not fit"),
        (lambda: Workload("x", 8, "incast", 1, fan_in=8), "fan_in", "do not fit"),
        (
            lambda: Workload("x", 32, "incast", 1, fan_in=3, victim_bytes=5),
            "victim_bytes",
            "without",
        ),
        (lambda: Workload("x", 32, "permutation", 1, rate_gbps=0), "rate_gbps", "positive"),
        (lambda: Workload("x", 32, "permutation", 1, trim_packets=2), "trim_packets", "at least 3"),
        (lambda: Workload("x", 32, "permutation", 1, base_rtt_ns=0), "base_rtt_ns", "positive"),
        (
            lambda: Workload("x", 32, "permutation", 1, victim_start_us=30),
            "victim_start_us",
            "only an incast",
        ),
        (
            lambda: Workload("x", 32, "incast", 1, fan_in=3, victim_start_us=30),
            "victim_start_us",
            "without",
        ),
        (
            lambda: Workload("x", 32, "incast", 1, fan_in=3, victim=True, victim_start_us=-1),
            "victim_start_us",
            "at least 0",
        ),
        (
            lambda: Workload("x", 32, "incast", 1, fan_in=3, victim=True, victim_start_us=1.5),  # type: ignore[arg-type]
            "victim_start_us",
            "whole number",
        ),
    ],
)
def test_bad_workloads(make: Callable[[], Workload], key: str, words: str) -> None:
    with pytest.raises(WorkloadError) as err:
        make()
    assert err.value.key == key
    assert words in str(err.value)


@pytest.mark.parametrize(
    ("flows", "key", "words"),
    [
        ([Flow(1, 0, 32, 10, "flow")], "flows[0].dst", "not in the fabric's 0..31"),
        ([Flow(1, -1, 3, 10, "flow")], "flows[0].src", "not in the fabric"),
        ([Flow(1, 4, 4, 10, "flow")], "flows[0]", "to itself"),
        ([Flow(1, 1, 2, 10, "flow"), Flow(2, 1, 2, 10, "flow")], "flows[1]", "second flow"),
        ([Flow(0, 1, 2, 10, "flow")], "flows[0].id", "0 is not a new id"),
        ([Flow(3, 1, 2, 10, "flow"), Flow(3, 2, 1, 10, "flow")], "flows[1].id", "not a new id"),
        ([Flow(1, 1, 2, 0, "flow")], "flows[0].size", "at least 1"),
        ([Flow(1, 1, 2, 10, "flow", -3)], "flows[0].start_us", "whole number"),
        ([Flow(1, 1, 2, 10, "flow", True)], "flows[0].start_us", "whole number"),  # type: ignore[arg-type]
    ],
)
def test_bad_flows(flows: list[Flow], key: str, words: str) -> None:
    with pytest.raises(WorkloadError) as err:
        check_flows(32, flows)
    assert err.value.key == key and words in str(err.value)


def test_end_time_is_generous_beside_the_busiest_host() -> None:
    w = incast(7, victim=False)
    # 7 x 2 MiB into one host at 100 Gb/s: 1174 us ideal, x 50
    assert end_us(w.shape, w.flows()) == round(50 * 7 * 2 * MIB * 8 / 100_000)
    assert end_us(w.shape, [Flow(1, 0, 1, 1000, "flow")]) == 10_000
    late = incast(7, victim=True, victim_start_us=40)  # the busiest host is still the receiver
    assert end_us(late.shape, late.flows()) == 40 + round(50 * 7 * 2 * MIB * 8 / 100_000)


def test_a_late_victim_starts_late_and_only_it() -> None:
    """The issue's placement: the same flows as the victim beside the incast, the victim
    alone starting later (and named so)."""
    at_once, late = suites.incast(32, 7, victim=True), suites.issue_victim()
    assert late.name == "incast-32-7to1-victim30us-2MiB-s1" != at_once.name
    pairs = [(f.id, f.src, f.dst, f.size, f.role) for f in late.flows()]
    assert pairs == [(f.id, f.src, f.dst, f.size, f.role) for f in at_once.flows()]
    assert {f.role: f.start_us for f in late.flows()} == {"incast": 0, "victim": 30}
    assert victim_only(late)[0].start_us == 30


def test_yaml_descriptions(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "- {hosts: 32, traffic: incast, size: 2MiB, fan_in: 7, victim: true, victim_size: 4MiB}\n"
        "- {name: mine, hosts: 8, traffic: all_to_all, size: 256KiB, seed: 3}\n"
        "- {hosts: 32, traffic: incast, size: 2MiB, fan_in: 7, victim: true, "
        "victim_start_us: 30}\n",
        encoding="utf-8",
    )
    a, b, c = load(path)
    assert c.name == "incast-32-7to1-victim30us-2MiB-s1" and c.victim_start_us == 30
    assert a.name == "incast-32-7to1-victim-2MiB-s1" and a.victim_size == 4 * MIB
    assert (b.name, b.size_bytes, b.seed) == ("mine", 256 * 1024, 3)
    assert parse_size("4096") == parse_size("4KiB") == 4096
    doc = {"hosts": 8, "traffic": "permutation", "size": "1MiB", "base_rtt_ns": 12000}
    assert from_mapping(doc, "x").name == "permutation-8-1MiB-s1-rtt12000"


@pytest.mark.parametrize(
    ("doc", "key", "words"),
    [
        ({"hosts": 32, "traffic": "permutation"}, "size_bytes", "missing"),
        ({"hosts": 32, "traffic": "permutation", "size": "4 MB"}, "", "not a size"),
        ({"hosts": 32, "traffic": "permutation", "size": 1, "colour": 1}, "colour", "unknown key"),
        ({"hosts": 32, "traffic": "permutation", "size": 1, "size_bytes": 1}, "size", "not both"),
        ([1], "", "expected a mapping"),
    ],
)
def test_bad_yaml_descriptions(doc: object, key: str, words: str) -> None:
    with pytest.raises(WorkloadError) as err:
        from_mapping(doc, "w.yaml[0]")
    assert err.value.key == key and words in str(err.value)


def test_yaml_file_errors(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="cannot read"):
        load(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("hosts: [32\n", encoding="utf-8")
    with pytest.raises(WorkloadError, match="not valid YAML"):
        load(bad)


def test_suites_are_valid_and_named_uniquely() -> None:
    full = suites.full()
    assert len({w.name for w in full}) == len(full)
    assert {w.hosts for w in full} == {8, 32, 128}
    assert {w.fan_in for w in full if w.traffic == "incast"} == {4, 7, 15, 31}
    assert {w.name for w in suites.CI} <= {w.name for w in suites.DEFAULT}
    issue = [w for w in full if w.victim_start_us]
    assert [(w.hosts, w.fan_in, w.victim_start_us, w.seed) for w in issue] == [
        (32, 7, 30, seed) for seed in suites.FULL_SEEDS
    ]
    assert suites.issue_victim() in suites.CI
