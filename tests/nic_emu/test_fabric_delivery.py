"""End-to-end on the in-memory fabric: spraying, byte-exact delivery, many connections."""

from __future__ import annotations

import io
from collections import Counter

from nic_emu.analysis import tx_per_plane
from nic_emu.connection.host import WriteCompleted, WriteReceived
from nic_emu.connection.records import COUNTERS
from nic_emu.event_log import TX, read_jsonl
from nic_emu.sender import PSN_MOD
from nic_emu.testing import SimNetwork
from nic_emu.testing.model_fabric import LinkFault

from .conftest import finish, make_net, start_transfer


def test_write_is_delivered_byte_exact_and_completes_once(net: SimNetwork) -> None:
    t = start_transfer(net, size=(1 << 20) + 123, messages=3)
    assert finish(t) and t.delivered
    received = net.received("nic2")
    assert [e.length for e in received] == [349567, 349567, 349565]
    assert [e.va for e in received] == [t.region.va + i * 349567 for i in range(3)]
    assert [type(e) for e in net.completed("nic0")] == [WriteCompleted] * 3
    assert t.receiver.counters["rx_dup"] == 0 and t.sender.counters["tx_rtx"] == 0


def test_spraying_is_even_across_planes_and_evs(net: SimNetwork) -> None:
    t = start_transfer(net, size=4 << 20)
    assert finish(t) and t.delivered
    per_plane = tx_per_plane(net.log, nic="nic0")
    assert sorted(per_plane) == [0, 1, 2, 3]
    assert max(per_plane.values()) - min(per_plane.values()) <= 1
    per_ev = Counter(r.ev for r in net.log if r.kind == TX and r.nic == "nic0")
    assert len(per_ev) == 32  # the whole active set, no backup used
    assert max(per_ev.values()) - min(per_ev.values()) <= 1
    # Every EV maps to its plane's path through one of the plane's two T1s, both used.
    paths = {e.path for e in t.sender.evs.ring}
    assert len(paths) == 8


def test_many_connections_many_nics() -> None:
    net = make_net()
    transfers = [
        start_transfer(net, "nic0", "nic2", 300_000, seed=1),
        start_transfer(net, "nic0", "nic4", 300_000, seed=2),
        start_transfer(net, "nic1", "nic2", 300_000, seed=3),
        start_transfer(net, "nic3", "nic0", 300_000, seed=4),
        start_transfer(net, "nic2", "nic3", 300_000, seed=5),  # same T0: no T1 on the path
    ]
    assert net.run_until_idle([t.sender for t in transfers], limit_ns=50_000_000)
    assert all(t.delivered for t in transfers)
    assert len(net.cores["nic0"].connections) == 3


def test_psn_wraps_around_24_bits() -> None:
    net = make_net()
    a, b = net.connect("nic0", "nic2", a_psn=PSN_MOD - 100)
    region = net.register_memory("nic2", 1 << 20)
    data = bytes(range(256)) * 4096
    net.write(a, data, region)
    assert net.run_until_idle([a], limit_ns=10_000_000)
    assert bytes(region.buffer) == data
    assert a.send.next_psn > PSN_MOD and b.rx.recv.rcv_nxt == a.send.next_psn


def test_zero_length_write_completes() -> None:
    net = make_net()
    a, _ = net.connect("nic0", "nic2")
    region = net.register_memory("nic2", 16)
    net.write(a, b"", region)
    assert net.run_until_idle([a], limit_ns=1_000_000)
    assert [e.length for e in net.received("nic2")] == [0]


def test_bidirectional_traffic_on_one_queue_pair() -> None:
    net = make_net()
    a, b = net.connect("nic0", "nic2")
    ra = net.register_memory("nic0", 500_000)
    rb = net.register_memory("nic2", 500_000)
    da, db = bytes([1]) * 500_000, bytes([2]) * 500_000
    net.write(a, da, rb)
    net.write(b, db, ra)
    assert net.run_until_idle([a, b], limit_ns=10_000_000)
    assert bytes(rb.buffer) == da and bytes(ra.buffer) == db


def test_runs_are_deterministic_and_logs_serialise() -> None:
    def run() -> str:
        net = make_net(seed=5)
        net.fabric.set_fault_everywhere(
            LinkFault(drop_prob=0.02, reorder_prob=0.2, reorder_delay_ns=3000)
        )
        t = start_transfer(net, size=400_000)
        assert finish(t) and t.delivered
        buf = io.StringIO()
        net.log.write_jsonl(buf)
        return buf.getvalue()

    first, second = run(), run()
    assert first == second
    records = read_jsonl(first.splitlines())
    assert len(records) > 100 and all(isinstance(r.t_ns, int) for r in records)


def test_write_received_reports_each_message_once_in_order() -> None:
    net = make_net()
    t = start_transfer(net, size=200_000, messages=10)
    assert finish(t) and t.delivered
    got = [e for e in net.received("nic2") if isinstance(e, WriteReceived)]
    assert [e.first_psn for e in got] == sorted(e.first_psn for e in got)
    assert sum(e.length for e in got) == 200_000 and len(got) == 10


def test_counters_snapshot_and_event_file_are_json(tmp_path) -> None:
    import json

    net = make_net()
    t = start_transfer(net, size=300_000)
    assert finish(t) and t.delivered
    snap = net.cores["nic0"].snapshot()
    text = json.dumps(snap)
    planes = snap["connections"][t.sender.qpn]["planes"]
    counters = snap["connections"][t.sender.qpn]["counters"]
    assert type(counters) is dict and list(counters) == list(COUNTERS)  # the names' order
    assert counters == dict(t.sender.counters) and counters["tx_data"] > 0
    assert sum(p["tx_packets"] for p in planes.values()) == t.sender.counters["tx_data"]
    assert all(p["good_active"] == 8 for p in planes.values())
    assert "tx_packets" in text and len(t.sender.ev_counters()) == 48
    path = tmp_path / "events.jsonl"
    written = net.log.write_jsonl(path)
    assert written == len(net.log) == len(read_jsonl(path.read_text().splitlines()))
