"""A transfer uses every path the faults leave (issue 17): every pair of single failures on
``tiny`` and a sample of triples on ``small``, against a reachability oracle computed from
the topology and address plan. Where a path remains, delivery is byte-exact; where none
does, the connection fails promptly and says the peer is unreachable (or its own ports
are down)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable
from dataclasses import dataclass, replace

import pytest

from nic_emu.config import NicConfig
from nic_emu.serve_config import transport_config
from nic_emu.testing import SimNetwork
from nic_emu.testing.model_fabric import LinkFault
from topologies import AddressPlan, Topology, load
from topologies.model import LinkKind
from vfabric.eventlist import EventList

from .conftest import TEST_CONFIG, Transfer, payload

SIZE = 256 << 10
LIMIT_NS = 50_000_000  # virtual time: 50 ms, ~200x what a healthy transfer needs


@dataclass(frozen=True)
class Fault:
    """One failed element: ``kind`` is switch, link (T0-T1), port (a NIC's link, the NIC
    is told) or cut (a NIC's link that silently drops everything, the NIC is not told)."""

    kind: str
    a: str
    b: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.a}" + (f"-{self.b}" if self.b else "")

    def apply(self, net: SimNetwork) -> None:
        if self.kind == "switch":
            net.fabric.set_switch_state(self.a, False)
        elif self.kind == "cut":
            net.fabric.set_fault(self.a, self.b, LinkFault(drop_prob=1.0))
        else:
            net.fabric.set_link_state(self.a, self.b, False)

    def breaks(self, hops: tuple[str, ...]) -> bool:
        """Does this fault cut the walk ``hops`` (NIC, switches..., NIC)?"""
        if self.kind == "switch":
            return self.a in hops[1:-1]
        pairs = set(itertools.pairwise(hops))
        return (self.a, self.b) in pairs or (self.b, self.a) in pairs


def faults_of(topo: Topology) -> list[Fault]:
    out = [Fault("switch", sw.name) for sw in topo.switches]
    for link in topo.links():
        if link.kind is LinkKind.FABRIC:
            out.append(Fault("link", link.a.node, link.b.node))
        else:
            out.append(Fault("port", link.a.node, link.b.node))
            out.append(Fault("cut", link.a.node, link.b.node))
    return out


def reachable(plan: AddressPlan, src: str, dst: str, faults: Iterable[Fault]) -> bool:
    """Is any path from ``src`` to ``dst`` intact? (The oracle: the address plan's paths.)"""
    topo = plan.topology
    faults = list(faults)
    same_t0 = topo.nic(src).t0_index == topo.nic(dst).t0_index
    for plane in topo.planes:
        t1s: list[int | None] = [None] if same_t0 else list(range(plane.t1_count))
        for t1 in t1s:
            path = plan.path(src, dst, plane.index, t1)
            hops = (src, *path.switches, dst)
            if not any(f.breaks(hops) for f in faults):
                return True
    return False


def run(
    topo: Topology,
    src: str,
    dst: str,
    faults: tuple[Fault, ...],
    config: NicConfig,
    seed: int,
    limit_ns: int = LIMIT_NS,
) -> tuple[SimNetwork, Transfer]:
    net = SimNetwork(topo, EventList(), config=config, seed=seed)
    for f in faults:
        f.apply(net)
    sender, receiver = net.connect(src, dst)
    region = net.register_memory(dst, SIZE)
    t = Transfer(net, sender, receiver, region, payload(SIZE, seed))
    t.post()
    net.run_until_idle([sender], limit_ns=limit_ns)
    return net, t


def check(topo: Topology, src: str, dst: str, faults: tuple[Fault, ...], config: NicConfig) -> None:
    plan = AddressPlan(topo)
    alive = reachable(plan, src, dst, faults)
    net, t = run(topo, src, dst, faults, config, seed=len(faults))
    where = f"{src}->{dst} with {', '.join(map(str, faults))}"
    failures = net.failures(src)
    if alive:
        assert not failures, f"{where}: a path remains but {failures[0].message}"
        assert t.sender.idle and t.delivered, f"{where}: not delivered in {LIMIT_NS} ns"
        return
    assert len(failures) == 1, f"{where}: no path remains, yet no clear failure"
    (failure,) = failures
    ports_down = all(not up for up in net.cores[src].port_up)
    if ports_down:
        assert failure.reason == "no_usable_ev", where
        assert "every plane down" in failure.message, where
    else:
        assert failure.reason == "peer_unreachable", f"{where}: {failure.message}"
        assert f"{dst} is unreachable" in failure.message, where
        # Prompt: the peer timeout after the last frame heard, plus a few RTOs.
        assert failure.t_ns <= config.peer_timeout_ns + 4 * config.rto_base_ns, where


TINY = load("tiny")
TINY_FAULTS = faults_of(TINY)
TINY_PAIRS = list(itertools.combinations(TINY_FAULTS, 2))


@pytest.mark.scenario  # a sweep: 2 x 4 chunks of every pair of faults (CI, not -m unit)
@pytest.mark.parametrize(("src", "dst"), [("nic0", "nic3"), ("nic0", "nic1")])
@pytest.mark.parametrize("chunk", range(4))
def test_every_pair_of_failures_on_tiny(src: str, dst: str, chunk: int) -> None:
    for pair in TINY_PAIRS[chunk::4]:
        check(TINY, src, dst, pair, TEST_CONFIG)


@pytest.mark.parametrize("fault", TINY_FAULTS, ids=str)
def test_every_single_failure_on_tiny(fault: Fault) -> None:
    check(TINY, "nic0", "nic3", (fault,), TEST_CONFIG)


def test_the_reported_two_switch_case_with_the_full_ev_set() -> None:
    """Issue 17's case, with the default (hardware) EV set of 256 + 64 EVs."""
    faults = (Fault("switch", "p1-t1-0"), Fault("switch", "p0-t0-0"))
    check(TINY, "nic0", "nic3", faults, NicConfig())


def test_sampled_triples_on_small() -> None:
    small = load("small")
    faults = faults_of(small)
    rng = random.Random(17)
    triples = [tuple(rng.sample(faults, 3)) for _ in range(60)]
    # Three faults cannot cut small's four planes: every triple leaves a path.
    for triple in triples:
        check(small, "nic0", "nic7", triple, TEST_CONFIG)


def test_the_two_switch_case_with_the_process_timers() -> None:
    """The same case with the nic-emu process's transport defaults (virtual time here)."""
    faults = (Fault("switch", "p1-t1-0"), Fault("switch", "p0-t0-0"))
    config = transport_config({})
    net, t = run(TINY, "nic0", "nic3", faults, config, seed=3, limit_ns=60_000_000_000)
    assert not net.failures("nic0") and t.delivered


def test_cutting_every_path_of_small_fails_as_unreachable() -> None:
    small = load("small")
    faults = tuple(Fault("switch", f"p{p}-t0-3") for p in range(4))  # nic7's T0s
    assert not reachable(AddressPlan(small), "nic0", "nic7", faults)
    check(small, "nic0", "nic7", faults, TEST_CONFIG)


def test_a_flapping_nic_link_never_fails_a_transfer() -> None:
    """Issue 17: a flap of one NIC link made a send fail; the other plane carries on, and
    the flapped one comes back when probes revive it."""
    for seed in range(4):
        net = SimNetwork(TINY, EventList(), config=TEST_CONFIG, seed=seed)
        sender, receiver = net.connect("nic0", "nic3")
        data = payload(2 << 20, seed)
        region = net.register_memory("nic3", len(data))
        net.fabric.flap(
            "nic0", "p0-t0-0", start_ns=20_000, down_ns=200_000, up_ns=100_000, cycles=3
        )
        t = Transfer(net, sender, receiver, region, data)
        t.post()
        assert net.run_until_idle([sender], limit_ns=LIMIT_NS)
        assert not net.failures("nic0") and t.delivered


def test_oracle_knows_the_issue_case() -> None:
    plan = AddressPlan(TINY)
    faults = (Fault("switch", "p1-t1-0"), Fault("switch", "p0-t0-0"))
    assert reachable(plan, "nic0", "nic3", faults)
    assert not reachable(plan, "nic0", "nic3", (*faults, Fault("switch", "p1-t1-1")))
    walk = ("nic0", "p1-t0-0", "p1-t1-1", "p1-t0-1", "nic3")
    assert replace(faults[0], a="p1-t1-1").breaks(walk)
    assert Fault("link", "p1-t1-1", "p1-t0-1").breaks(walk)
    assert not Fault("link", "p1-t0-0", "p1-t1-0").breaks(walk)


@pytest.mark.parametrize("verdicts", [False, True], ids=["one_timeout_each", "path_verdicts"])
@pytest.mark.parametrize("timers", ["hardware", "process"])
def test_a_blackout_longer_than_the_rto_never_fails_a_transfer(timers: str, verdicts: bool) -> None:
    """Every link drops everything for a while, then every path is back. The window was
    full when the blackout began: a silent timeout took one packet out of flight and
    shrank cwnd by as much, so the window stayed full of lost packets, nothing (not even a
    retransmission) could be sent, and after 7 backoffs the transfer failed with
    max_retries (the process soak's 9.6 s without an acknowledgement). Without path
    verdicts the in-flight packets leave one silent timeout at a time; with them (the
    default) a retired path's packets are resent at once."""
    base = TEST_CONFIG if timers == "hardware" else transport_config({})
    config = replace(base, path_verdicts=verdicts)
    blackout_ns = 4 * config.rto_base_ns
    net = SimNetwork(TINY, EventList(), config=config, seed=5)
    sender, receiver = net.connect("nic0", "nic3")
    sender.no_ev_timeout_ns = 100 * blackout_ns  # the process: the transfer deadline
    data = payload(4 << 20, 5)
    region = net.register_memory("nic3", len(data))
    t = Transfer(net, sender, receiver, region, data)
    # A quarter into the transfer (both ports at line rate), while the window is full.
    start_ns = len(data) * 8_000_000_000 // (2 * config.port_rate_bps) // 4
    net.events.at(start_ns, net.fabric.set_fault_everywhere, LinkFault(drop_prob=1.0))
    net.events.at(start_ns + blackout_ns, net.fabric.set_fault_everywhere, None)
    t.post()
    assert net.run_until_idle([sender], limit_ns=100 * blackout_ns)
    assert not net.failures("nic0"), net.failures("nic0")[0].message
    assert t.delivered
    if verdicts:
        assert sender.counters["losses_path"] >= 1
    else:
        assert sender.counters["rto_silent"] >= 1
