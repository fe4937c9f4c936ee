"""The two-process fabric (vfabric.parallel): every transfer intact, the same run twice,
late frames refused, a dead or failing peer a specific error with the logs named; and the
same run, event logs included, on the pure and on the compiled path.

The unit tests run on the path this process loaded (the suite's is pure: tests/conftest.py
sets MRC_TESTBED_PURE=1; ``MRC_TESTBED_PURE=0`` runs them on an installed native build);
the integration test runs both paths in child processes, as tests/clikit/test_hotpath.py
does for one process."""

from __future__ import annotations

import hashlib
import json
import mmap
import multiprocessing
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from operator import itemgetter
from pathlib import Path

import pytest
from native_build import build_native

from clikit import hotpath
from p4emu.backend import native as generated_native
from testbed.reference import suites, vfside
from topologies.events import LinkRef
from topologies.generators import two_tier
from vfabric import VirtualFabric
from vfabric.parallel import (
    LateFrameError,
    ParallelRun,
    Partition,
    PartitionSetupError,
    PartitionStats,
    PeerDiedError,
    PeerFailedError,
    PeerMessageError,
    PeerTimeoutError,
    Split,
    crossing_wires,
    default_split,
    lookahead_ns,
    plane_split,
    run_two_process,
    split_of,
    tree_halves,
)
from vfabric.pfc import PfcConfig

SIZE = 64 << 10  # per transfer: tiny's all-to-all (12 transfers) runs in a fraction of a second


def all_to_all(size: int = SIZE, seed: int = 2) -> VirtualFabric:
    fabric = VirtualFabric("tiny", seed=seed)
    for src in fabric.nics:
        for dst in fabric.nics:
            if src != dst:
                fabric.transfer(src, dst, size)
    return fabric


ROOT = Path(__file__).resolve().parents[2]


#: tiny's fat-tree halves (tree_halves): B the T0s and T1s of index 1 and nic2, nic3
TREE_B = frozenset({"p0-t0-1", "p0-t1-1", "p1-t0-1", "p1-t1-1"})


def run_twice(
    tmp_path: Path,
    planes_b: frozenset[int] | None,
    nics_b: frozenset[str] | None,
    switches_b: frozenset[str] | None = None,
    build: Callable[[], VirtualFabric] = all_to_all,
) -> list[tuple[ParallelRun, VirtualFabric]]:
    out = []
    for i in range(2):
        fabric = build()
        run = run_two_process(
            fabric,
            planes_b,
            nics_b=nics_b,
            switches_b=switches_b,
            log_dir=tmp_path / f"run{i}",
            timeout_s=30,
        )
        out.append((run, fabric))
    return out


def assert_counters_from_their_owners(run: ParallelRun, fabric: VirtualFabric) -> None:
    """Every switch's and wire's counters come from the side that owns it: what the wires
    into a switch carried (counted by their senders, on either side) is what the switch
    traversed (counted by its owner), and what it sent is what its wires carried."""
    assert set(run.switches) == set(fabric.switches)
    assert set(run.links) == {w.name for w in fabric.wires.values()}
    for name, row in run.switches.items():
        into = [w for w in fabric.wires.values() if w.dst == name]
        out_of = [w for w in fabric.wires.values() if w.src == name]
        carried_in = sum(
            run.links[w.name]["tx_packets"] - sum(run.links[w.name]["drops"].values()) for w in into
        )
        assert row["traversals"] == carried_in, name
        assert row["packets_out"] == sum(run.links[w.name]["tx_packets"] for w in out_of), name
    # every NIC sent on every plane (all-to-all), whichever side owns it
    assert all(
        run.links[w.name]["tx_packets"] > 0 for w in fabric.wires.values() if w.src in fabric.nics
    )


@pytest.mark.parametrize(
    ("planes_b", "nics_b", "switches_b"),
    [
        (None, None, None),  # the default: halves, nic2 and nic3 and plane 1 in B
        (None, frozenset(), None),  # NICs | switches
        (frozenset({1}), frozenset(), None),  # A every NIC and plane 0
        (None, frozenset({"nic2", "nic3"}), TREE_B),  # inside each plane: the tree's halves
    ],
    ids=["halves", "nics|switches", "plane1", "tree-halves"],
)
def test_every_transfer_arrives_intact_and_the_run_repeats(
    tmp_path: Path,
    planes_b: frozenset[int] | None,
    nics_b: frozenset[str] | None,
    switches_b: frozenset[str] | None,
) -> None:
    (run1, f1), (run2, f2) = run_twice(tmp_path, planes_b, nics_b, switches_b)
    assert run1.finished and run2.finished
    assert len(f1.transfers) == 12 and all(t.intact for t in f1.transfers + f2.transfers)
    # deterministic: the same event log, the same completions, the same exchange
    assert f1.event_log_sha256 == f2.event_log_sha256
    assert run1.b_event_log_sha256 == run2.b_event_log_sha256 != ""
    assert [t.completion_ns for t in f1.transfers] == [t.completion_ns for t in f2.transfers]
    assert (run1.a.windows, run1.a.frames_sent, run1.b.frames_sent, run1.traversals) == (
        run2.a.windows,
        run2.a.frames_sent,
        run2.b.frames_sent,
        run2.traversals,
    )
    assert run1.links == run2.links and run1.switches == run2.switches
    # both sides worked; the frames each sent are those the other received
    assert run1.a.frames_sent == run1.b.frames_received > 0
    assert run1.b.frames_sent == run1.a.frames_received > 0
    assert run1.window_ns == 1000 and run1.a.windows == run1.b.windows > 0
    assert run1.b.traversals > 0 and (run1.a.traversals > 0) == bool(run1.a.planes)
    expected_planes = {None: [0], frozenset(): [], TREE_B: [0, 1]}
    assert run1.a.planes == ([0] if planes_b else expected_planes[switches_b or nics_b])
    assert run1.a.switches + run1.b.switches == len(f1.switches)
    assert run1.traversals == sum(row["traversals"] for row in run1.switches.values())
    assert_counters_from_their_owners(run1, f1)
    assert all(p.exists() for p in run1.logs) and "done:" in run1.logs[1].read_text()
    # close to the one-process run (same-instant ties break differently)
    one = all_to_all()
    assert one.run()
    for t, u in zip(f1.transfers, one.transfers, strict=True):
        assert t.completion_ns is not None and u.completion_ns is not None
        assert abs(t.completion_ns - u.completion_ns) <= 0.1 * u.completion_ns
    if nics_b != frozenset():  # transfers between the sides were set up and checked in halves
        assert all(t.receiver is None for t in f1.transfers if t.dst in ("nic2", "nic3"))
        assert any(t.intact and t.receiver is None for t in f1.transfers)
    assert run1.critical_path_cpu_s() > 0 and len(run1.a.window_compute) == run1.a.windows


def test_a_run_until_a_time_stops_there_unfinished(tmp_path: Path) -> None:
    fabric = all_to_all()
    run = run_two_process(fabric, until_ns=10_500, log_dir=tmp_path, timeout_s=30)
    assert not run.finished and fabric.now == 10_500
    assert not any(t.finished for t in fabric.transfers)
    assert run.a.windows == run.b.windows == 11  # [0, 999], ..., [10000, 10500]
    one = all_to_all()
    assert not one.run(until_ns=10_500) and one.now == 10_500


def test_the_outbox_collects_the_arrival_the_wire_would_schedule() -> None:
    fabric = all_to_all()
    wire = fabric.wires[("nic0", "p0-t0-0")]
    assert wire.outbox is None  # every wire of a one-process fabric schedules its arrivals
    pending = fabric.events.pending()
    wire.receive(b"\x00" * 1000)  # [0, 80] ns on the wire, then 1 us
    assert fabric.events.pending() == pending + 1 and wire.busy_until == 80
    wire.outbox = []
    pending += 1
    wire.receive(b"\x00" * 1000)  # behind the first: [80, 160]
    wire.receive(b"\x00" * 500)
    assert fabric.events.pending() == pending  # nothing scheduled here
    assert wire.outbox == [(1160, b"\x00" * 1000), (1200, b"\x00" * 500)]
    assert wire.tx_packets == 3 and wire.busy_until == 200 and wire.tx_bytes == 2500


def test_a_barrier_collects_every_outbox_in_the_order_of_one_list(tmp_path: Path) -> None:
    """Frames collected wire by wire, then sorted by (time, wire) as the receiver does,
    come in the order one list in sending order would give: the same schedule."""
    part = partition(tmp_path, planes_b=frozenset({1}))
    by_name = {part.wires[i].name: (i, box) for i, box in part.outboxes}
    assert len(part.outboxes) == 4 and set(by_name) == {f"nic{i}->p1-t0-{i // 2}" for i in range(4)}
    (i0, box0), (i3, box3) = by_name["nic0->p1-t0-0"], by_name["nic3->p1-t0-1"]
    sent = [(i3, 2000, b"c"), (i0, 2000, b"a"), (i3, 1500, b"d"), (i0, 2000, b"b")]
    for wire_id, t_ns, frame in sent:  # in sending order
        (box0 if wire_id == i0 else box3).append((t_ns, frame))
    frames = part.collect()
    assert not box0 and not box3 and part.collect() == []
    one_list = [(t_ns, wire_id, frame) for wire_id, t_ns, frame in sent]
    key = itemgetter(0, 1)  # the receiver's sort (Partition.deliver): time, wire; stable
    assert sorted(frames, key=key) == sorted(one_list, key=key)
    assert i0 < i3 and [f for _, _, f in sorted(frames, key=key)] == [b"d", b"a", b"b", b"c"]
    part.close()


PIPE_ENDS: list[object] = []


def partition(
    tmp_path: Path,
    alive: bool = True,
    timeout_s: float = 30,
    planes_b: frozenset[int] = frozenset({0, 1}),
) -> Partition:
    fabric = all_to_all()
    mine, other = multiprocessing.Pipe()
    PIPE_ENDS.append(other)  # open but silent: nobody sends
    split = plane_split(fabric, planes_b)
    return Partition(fabric, "A", split, mine, tmp_path / "a.log", timeout_s, lambda: alive)


def test_a_frame_for_a_time_already_passed_is_an_error(tmp_path: Path) -> None:
    part = partition(tmp_path)
    part.events.run(5_000, lambda: False)
    wire_id = next(i for i, w in enumerate(part.wires) if w.name == "p0-t0-0->nic0")
    part.deliver([(5_001, wire_id, b"ok")])  # after the window: scheduled
    with pytest.raises(LateFrameError, match=r"p0-t0-0->nic0 arrives at 5000 ns.*ended at 5000"):
        part.deliver([(5_000, wire_id, b"late")])
    part.close()


def partition_b(tmp_path: Path) -> tuple[Partition, Connection]:
    """B's side of an in-process pipe, and A's end of it (to talk as A)."""
    fabric = all_to_all()
    mine, other = multiprocessing.Pipe()
    split = plane_split(fabric, frozenset({0, 1}))
    return Partition(fabric, "B", split, mine, tmp_path / "b.log", 30, lambda: True), other


def test_b_answers_before_it_decodes_what_a_sent(tmp_path: Path) -> None:
    part, a_end = partition_b(tmp_path)
    a_end.send_bytes(pickle.dumps(([], 7, False)))
    assert part.exchange(([], 9, True)) == ([], 7, False)
    assert pickle.loads(a_end.recv_bytes()) == ([], 9, True)
    part.close()


def test_a_barrier_works_while_the_peers_message_is_not_there_yet(tmp_path: Path) -> None:
    # the loop's idle work (the event log's new records hashed) runs once per barrier, and
    # only when the peer's message has not come yet
    part, a_end = partition_b(tmp_path)
    calls: list[int] = []

    def idle() -> None:
        calls.append(len(calls))
        a_end.send_bytes(pickle.dumps(([], 7, False)))  # the peer's message comes meanwhile

    part._idle = idle
    assert part.exchange(([], 9, True)) == ([], 7, False)
    assert calls == [0] and pickle.loads(a_end.recv_bytes()) == ([], 9, True)
    a_end.send_bytes(pickle.dumps(([], 8, False)))  # there before B looks: no idle work
    assert part.exchange(([], 10, True)) == ([], 8, False)
    assert calls == [0] and part.stats.idle_cpu_s >= 0.0
    part.close()


def test_the_event_log_is_hashed_during_the_loop_to_the_same_digest(tmp_path: Path) -> None:
    fabric = all_to_all()
    flushed: list[int] = []
    flush = fabric.flush

    def counting_flush() -> None:
        flushed.append(len(fabric.log.records))
        flush()

    fabric.flush = counting_flush  # type: ignore[method-assign]
    run = run_two_process(fabric, log_dir=tmp_path, timeout_s=30)
    assert run.finished
    # A hashed records at barriers inside the loop (before the fork and after the run it
    # sees two lengths of the log only), and its digest is that of every line in order
    assert len(set(flushed)) > 2 and run.a.idle_cpu_s > 0.0
    lines = "".join(rec.to_json() + "\n" for rec in fabric.log.records)
    assert fabric.event_log_sha256 == hashlib.sha256(lines.encode()).hexdigest()
    assert "idle_cpu_s" in run.a.summary() and run.b_event_log_sha256 != ""


@pytest.mark.parametrize(
    ("kind", "error", "message"),
    [
        ("LateFrameError", LateFrameError, "arrives at 5 ns"),
        ("RuntimeError", PeerFailedError, "partition A failed: RuntimeError: arrives at 5 ns"),
    ],
)
def test_an_error_read_by_b_before_the_pipe_closed_is_still_that_error(
    tmp_path: Path, kind: str, error: type[Exception], message: str
) -> None:
    # A's last word is read by B's exchange before B answers; the answer then finds the
    # pipe closed: B raises A's error, not a dead peer
    part, a_end = partition_b(tmp_path)
    a_end.send_bytes(pickle.dumps(("error", kind, "arrives at 5 ns")))
    a_end.close()
    with pytest.raises(error, match=message):
        part.exchange(([], None, True))
    part.close()


def test_a_message_in_the_shared_area_arrives_by_its_doorbell(tmp_path: Path) -> None:
    fabric = all_to_all()
    mine, other = multiprocessing.Pipe()
    split = plane_split(fabric, frozenset({0, 1}))
    out, back = mmap.mmap(-1, 64), mmap.mmap(-1, 64)
    a = Partition(fabric, "A", split, mine, tmp_path / "a.log", 30, lambda: True, (out, back))
    b = Partition(fabric, "B", split, other, tmp_path / "b.log", 30, lambda: True, (back, out))
    a.send([(5, 1, b"frame")])
    assert pickle.loads(out[: a.stats.bytes_pickled]) == [(5, 1, b"frame")]
    assert b.receive() == [(5, 1, b"frame")]
    a.send(b"x" * 100)  # longer than the area: by the pipe itself
    assert b.receive() == b"x" * 100
    b.send(1)
    b.send(2)  # no word from A since the first: the area may be unread, so by the pipe
    assert pickle.loads(back[:5]) == 1
    assert (a.receive(), a.receive()) == (1, 2)
    a.close()
    b.close()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"S" + (65).to_bytes(4, "little"), "malformed doorbell"),  # past the area's end
        (b"S\x01", "malformed doorbell"),  # short
        (b"\x80\x05junk", "does not unpickle"),
        (b"", "does not unpickle"),
    ],
    ids=["past-the-area", "short-doorbell", "junk", "empty"],
)
def test_a_malformed_message_from_the_peer_is_a_specific_error(
    tmp_path: Path, data: bytes, message: str
) -> None:
    fabric = all_to_all()
    mine, other = multiprocessing.Pipe()
    split = plane_split(fabric, frozenset({0, 1}))
    areas = (mmap.mmap(-1, 64), mmap.mmap(-1, 64))
    part = Partition(fabric, "A", split, mine, tmp_path / "a.log", 30, lambda: True, areas)
    other.send_bytes(data)
    with pytest.raises(PeerMessageError, match=message):
        part.receive()
    part.close()


def test_a_doorbell_without_a_shared_area_is_a_specific_error(tmp_path: Path) -> None:
    part, a_end = partition_b(tmp_path)
    a_end.send_bytes(b"S" + (4).to_bytes(4, "little"))
    with pytest.raises(PeerMessageError, match="no shared area"):
        part.receive()
    part.close()


def test_a_window_longer_than_the_lookahead_makes_frames_late(tmp_path: Path) -> None:
    fabric = all_to_all()
    assert lookahead_ns(fabric, default_split(fabric)) == 1000
    with pytest.raises(LateFrameError, match="arrives at"):
        run_two_process(fabric, window_ns=5_000, log_dir=tmp_path, timeout_s=30)


def test_a_silent_peer_times_out_and_a_gone_one_is_dead(tmp_path: Path) -> None:
    part = partition(tmp_path, timeout_s=0.3)
    with pytest.raises(PeerTimeoutError, match="no word"):
        part.receive()
    part.close()
    part = partition(tmp_path, alive=False)
    with pytest.raises(PeerDiedError, match="exited mid-run"):
        part.receive()
    part.close()


def _die(port: int, frame: bytes) -> None:
    os._exit(3)  # the process ends without a word: no exception, no message


def _fail(port: int, frame: bytes) -> None:
    raise RuntimeError("switch exploded")


@pytest.mark.parametrize(
    ("sink", "error", "message"),
    [(_die, PeerDiedError, "mid-run"), (_fail, PeerFailedError, "switch exploded")],
    ids=["dies", "raises"],
)
def test_a_peer_that_dies_or_fails_is_a_specific_error_naming_the_logs(
    tmp_path: Path, sink: object, error: type[Exception], message: str
) -> None:
    fabric = all_to_all()
    # B (plane 1) is forked with this sink on a T0's link from nic0: its first frame there
    fabric.wires[("nic0", "p1-t0-0")].sink = sink  # type: ignore[assignment]
    with pytest.raises(error, match=message) as caught:
        run_two_process(fabric, frozenset({1}), log_dir=tmp_path, timeout_s=30)
    logs = caught.value.logs  # type: ignore[attr-defined]
    assert logs == (tmp_path / "partition-A.log", tmp_path / "partition-B.log")
    assert str(logs[0]) in str(caught.value) and str(logs[1]) in str(caught.value)
    assert "error" in logs[0].read_text()
    if sink is _fail:
        assert "RuntimeError: switch exploded" in logs[1].read_text()


def test_what_the_prototype_does_not_run_is_refused(tmp_path: Path) -> None:
    fabric = all_to_all()
    with pytest.raises(PartitionSetupError, match="some of the planes"):
        run_two_process(fabric, frozenset({2}), log_dir=tmp_path)
    with pytest.raises(PartitionSetupError, match="'nic9', not a NIC"):
        run_two_process(fabric, nics_b=frozenset({"nic9"}), log_dir=tmp_path)
    faulty = all_to_all()
    faulty.schedule(LinkRef("p0-t0-0", "p0-t1-0").change(20_000, up=False))
    with pytest.raises(PartitionSetupError, match="no faults"):
        run_two_process(faulty, log_dir=tmp_path)
    lossless = VirtualFabric("tiny", pfc=PfcConfig())
    with pytest.raises(PartitionSetupError, match="PFC"):
        run_two_process(lossless, log_dir=tmp_path)
    used = all_to_all()
    used.run(until_ns=1_000)
    with pytest.raises(PartitionSetupError, match="fresh fabric"):
        run_two_process(used, log_dir=tmp_path)
    with pytest.raises(PartitionSetupError, match="window_ns"):
        run_two_process(all_to_all(), window_ns=0, log_dir=tmp_path)


def test_a_split_that_cannot_run_is_refused_with_its_reason(tmp_path: Path) -> None:
    fabric = all_to_all()
    with pytest.raises(PartitionSetupError, match="'p0-t0-9', not a switch of the fabric"):
        run_two_process(fabric, switches_b=frozenset({"p0-t0-1", "p0-t0-9"}), log_dir=tmp_path)
    with pytest.raises(PartitionSetupError, match="'nic7', not a NIC"):
        run_two_process(fabric, nics_b=frozenset({"nic7"}), switches_b=TREE_B, log_dir=tmp_path)
    with pytest.raises(PartitionSetupError, match="planes_b or its switches_b, not both"):
        run_two_process(fabric, frozenset({1}), switches_b=TREE_B, log_dir=tmp_path)
    with pytest.raises(PartitionSetupError, match="leaves B empty"):
        run_two_process(fabric, switches_b=frozenset(), log_dir=tmp_path)
    with pytest.raises(PartitionSetupError, match="leaves A empty"):
        run_two_process(fabric, frozenset({0, 1}), nics_b=frozenset(fabric.nics), log_dir=tmp_path)
    # the only crossing link (p0-t0-0 to p0-t1-0, B its T1) of 0.4 ns, rounded to 0: no lookahead
    short = two_tier(1, 2, 1, 1, links=[{"between": ["p0-t0-0", "p0-t1-0"], "delay_us": 0.0004}])
    quick = VirtualFabric(short)
    quick.transfer("nic0", "nic1", 4096)
    with pytest.raises(PartitionSetupError, match=r"delay of at least 1 ns, got \[0\]"):
        run_two_process(quick, log_dir=tmp_path)
    assert not quick.transfers[0].finished and quick.now == 0
    # what the prototype refuses stays refused with the split inside a plane
    faulty = all_to_all()
    faulty.schedule(LinkRef("p0-t0-0", "p0-t1-1").change(20_000, up=False))
    with pytest.raises(PartitionSetupError, match="no faults"):
        run_two_process(faulty, switches_b=TREE_B, nics_b=frozenset({"nic2"}), log_dir=tmp_path)


def permutation(size: int = SIZE) -> VirtualFabric:
    """htsim_compare's workload (a one-plane K=8 fat tree, a 32-host permutation), smaller."""
    work = suites.permutation(32, size=size)
    return vfside.build(work.shape, work.flows(), work.seed)[0]


def test_the_permutation_splits_inside_its_plane_by_default(tmp_path: Path) -> None:
    (run1, f1), (run2, f2) = run_twice(tmp_path, None, None, build=permutation)
    assert run1.finished and run2.finished
    assert len(f1.transfers) == 32 and all(t.intact for t in f1.transfers + f2.transfers)
    assert f1.event_log_sha256 == f2.event_log_sha256
    assert run1.b_event_log_sha256 == run2.b_event_log_sha256 != ""
    assert [t.completion_ns for t in f1.transfers] == [t.completion_ns for t in f2.transfers]
    assert (run1.a.windows, run1.a.frames_sent, run1.b.frames_sent) == (
        run2.a.windows,
        run2.a.frames_sent,
        run2.b.frames_sent,
    )
    assert run1.links == run2.links and run1.switches == run2.switches
    # both sides run NICs and switches: 16 NICs, 4 T0s and 2 T1s each
    assert (run1.a.nics, run1.a.switches, run1.b.nics, run1.b.switches) == (16, 6, 16, 6)
    assert run1.a.traversals > 0 and run1.b.traversals > 0
    assert run1.a.frames_sent == run1.b.frames_received > 0
    assert_counters_from_their_owners(run1, f1)
    # a frame crosses at most once on its way (NICs | switches: every hop pair twice)
    nics_switches = permutation()
    old = run_two_process(nics_switches, nics_b=frozenset(), log_dir=tmp_path / "old")
    crossed, crossed_old = (
        run1.a.frames_sent + run1.b.frames_sent,
        old.a.frames_sent + old.b.frames_sent,
    )
    assert old.traversals == pytest.approx(run1.traversals, rel=0.05)
    assert crossed < 0.6 * crossed_old
    # close to the one-process run: same-instant ties break differently (here one
    # transfer of 32 finished 2 us sooner: 15.5 us against 17.5 us; the rest within 2 %)
    one = permutation()
    assert one.run()
    rel = []
    for t, u in zip(f1.transfers, one.transfers, strict=True):
        assert t.completion_ns is not None and u.completion_ns is not None
        rel.append(abs(t.completion_ns - u.completion_ns) / u.completion_ns)
    assert max(rel) <= 0.15 and sorted(rel)[len(rel) // 2] <= 0.01


def test_a_split_by_planes_crosses_on_access_links_only() -> None:
    fabric = all_to_all()
    wires = crossing_wires(fabric, plane_split(fabric, frozenset({1})))
    assert len(wires) == 2 * 4  # both directions of the 4 NICs' plane-1 links
    assert all(w.plane == 1 and "nic" in w.name for w in wires)
    plane1 = frozenset({"p1-t0-0", "p1-t0-1", "p1-t1-0", "p1-t1-1"})
    assert default_split(fabric) == Split(plane1, frozenset({"nic2", "nic3"}), "halves")
    # halves: nic0 and nic1 on plane 1, nic2 and nic3 on plane 0
    halves = crossing_wires(fabric, default_split(fabric))
    assert sorted(w.name for w in halves if w.src.startswith("nic")) == [
        "nic0->p1-t0-0",
        "nic1->p1-t0-0",
        "nic2->p0-t0-1",
        "nic3->p0-t0-1",
    ]
    assert len(halves) == 2 * 4
    assert split_of(fabric, nics_b=frozenset()).name == "NICs | switches"
    assert split_of(fabric, frozenset({1})) == Split(plane1, frozenset(), "planes")


def test_a_split_inside_a_plane_crosses_on_the_t0_t1_links_between_the_halves() -> None:
    fabric = all_to_all()
    split = tree_halves(fabric)
    assert split == Split(TREE_B, frozenset({"nic2", "nic3"}), "tree halves")
    wires = crossing_wires(fabric, split)
    # per plane: t0-0 -> t1-1, t0-1 -> t1-0, and back
    assert sorted(w.name for w in wires) == sorted(
        f"{a}->{b}"
        for p in (0, 1)
        for x, y in ((f"p{p}-t0-0", f"p{p}-t1-1"), (f"p{p}-t0-1", f"p{p}-t1-0"))
        for a, b in ((x, y), (y, x))
    )
    assert [split.side_of(n) for n in ("nic0", "nic3", "p1-t1-0", "p1-t1-1")] == list("ABAB")
    # the default on one plane of two T0s and more; NICs | switches with a single T0
    one_plane = VirtualFabric(two_tier(1, 2, 1, 1, name="one-plane"))
    assert default_split(one_plane) == Split(
        frozenset({"p0-t0-1", "p0-t1-0"}), frozenset({"nic1"}), "tree halves"
    )
    single_t0 = VirtualFabric(two_tier(1, 1, 2, 2, name="single-t0"))
    assert default_split(single_t0) == Split(
        frozenset({"p0-t0-0", "p0-t1-0", "p0-t1-1"}), frozenset(), "NICs | switches"
    )
    with pytest.raises(PartitionSetupError, match="at least 2 T0 switches per plane, single-t0"):
        tree_halves(single_t0)
    # htsim_compare's shape: K=8, 8 T0s of 4 hosts and 4 T1s; A the lower halves
    tree = VirtualFabric(vfside.topology(suites.permutation(32, size=SIZE).shape))
    halves = default_split(tree)
    assert halves.name == "tree halves" and len(halves.nics_b) == 16
    assert sorted(halves.switches_b) == [*(f"p0-t0-{i}" for i in range(4, 8)), "p0-t1-2", "p0-t1-3"]
    crossing = crossing_wires(tree, halves)
    assert len(crossing) == 2 * (4 * 2 + 4 * 2)  # each T0 to the other half's 2 T1s
    assert all(w.kind == "fabric" for w in crossing) and lookahead_ns(tree, halves) == 1000


def test_the_critical_path_takes_the_slower_side_of_each_window() -> None:
    a = PartitionStats("A", [], ping_rtt_s=1e-5)
    b = PartitionStats("B", [0], ping_rtt_s=2e-5)
    a.window_compute, a.window_exchange = [1.0, 0.1], [0.01, 0.01]
    b.window_compute, b.window_exchange = [0.5, 0.5], [0.02, 0.02]
    run = ParallelRun(True, 1000, a, b, {}, {}, ())
    assert run.critical_path_cpu_s() == pytest.approx(1.01 + 0.52 + 2 * 2e-5)
    assert run.critical_path_cpu_s(0.0) == pytest.approx(1.53)


#: A child's runs, on the path its environment selects: tiny's all-to-all in two processes,
#: split in halves, NICs | switches and the tree's halves, and htsim_compare's permutation
#: (64 KiB) split by default (the tree's halves); one JSON line.
BOTH_SPLITS = """
import json, sys, tempfile
from clikit import hotpath
from testbed.reference import suites, vfside
from vfabric import VirtualFabric
from vfabric.parallel import run_two_process, tree_halves
runs = {}
for split in ("halves", "nics|switches", "tree-halves", "permutation"):
    if split == "permutation":
        work = suites.permutation(32, size=64 << 10)
        fabric = vfside.build(work.shape, work.flows(), work.seed)[0]
    else:
        fabric = VirtualFabric("tiny", seed=2)
        for src in fabric.nics:
            for dst in fabric.nics:
                if src != dst:
                    fabric.transfer(src, dst, 64 << 10)
    kwargs = {"nics_b": frozenset()} if split == "nics|switches" else {}
    if split == "tree-halves":
        halves = tree_halves(fabric)
        kwargs = {"switches_b": halves.switches_b, "nics_b": halves.nics_b}
    run = run_two_process(fabric, **kwargs, log_dir=tempfile.mkdtemp(), timeout_s=60)
    runs[split] = {
        "split": run.split,
        "finished": run.finished,
        "intact": all(t.intact for t in fabric.transfers),
        "a": fabric.event_log_sha256,
        "b": run.b_event_log_sha256,
        "completions": [t.completion_ns for t in fabric.transfers],
        "exchange": [run.a.windows, run.a.frames_sent, run.b.frames_sent, run.traversals],
        "links": run.links,
        "switches": run.switches,
    }
info = hotpath.describe()
print(json.dumps({"path": info["path"], "generated": info["generated_p4"], "runs": runs}))
"""


@pytest.mark.integration
@pytest.mark.timeout(1800)
def test_both_paths_give_the_same_two_process_runs(tmp_path: Path) -> None:
    """The native build, then the two-process runs twice on each path (each run in a fresh
    process): the same A and B event logs, completions, exchange and counters on all four,
    for each split (the tree's halves on tiny and on htsim_compare's permutation too)."""
    lib = build_native(tmp_path)
    outputs: dict[str, list[dict[str, object]]] = {"pure": [], "compiled": []}
    for _ in range(2):
        for path in outputs:
            env = {k: v for k, v in os.environ.items() if k != hotpath.PURE_ENV}
            env[generated_native.CACHE_ENV] = str(tmp_path / "p4cache")
            if path == "pure":
                env[hotpath.PURE_ENV] = "1"
            else:
                env[hotpath.NATIVE_DIR_ENV] = str(lib)
            done = subprocess.run(
                [sys.executable, "-c", BOTH_SPLITS],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, f"{path}: {done.stderr[-3000:]}"
            outputs[path].append(json.loads(done.stdout.splitlines()[-1]))
    for path, reports in outputs.items():
        assert [r["path"] for r in reports] == [path, path]
    assert all(r["generated"]["compiled"] > 0 for r in outputs["compiled"])  # type: ignore[index]
    reference = outputs["pure"][0]["runs"]
    splits = {"halves", "nics|switches", "tree-halves", "permutation"}
    assert isinstance(reference, dict) and set(reference) == splits
    for split, run in reference.items():
        assert run["finished"] and run["intact"] and run["b"], split
    assert (reference["permutation"]["split"], reference["tree-halves"]["split"]) == (
        "tree halves",
        "custom",
    )
    for report in [*outputs["pure"], *outputs["compiled"]]:
        assert report["runs"] == reference
