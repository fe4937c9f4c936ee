"""nic_emu.connection.records: what one connection writes to the event log, and the one
home of the records written from more than one place."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

import nic_emu
from nic_emu import event_log as ev_kinds
from nic_emu.connection.records import COUNTERS, ConnectionCounters, ConnectionLog, Counters
from nic_emu.core import NIC_COUNTERS, NicCounters
from nic_emu.ev_set import STATE_NAMES, EvEntry, EvState
from nic_emu.event_log import EventLog


def test_every_record_names_the_nic_and_the_qpn() -> None:
    log = EventLog()
    clog = ConnectionLog(log, "nic0", 0x101)
    e = EvEntry(ev=0x1234, plane=1, path=(1, "t1"))
    clog.record(5, ev_kinds.RTO, backoff=2, blamed="ack")
    clog.about_ev(6, ev_kinds.PROBE_TX, e)
    clog.retransmit(7, 42, "go_back_n", packets=3)
    rto, probe, rtx = log.records
    assert (rto.t_ns, rto.nic, rto.kind, rto.qpn, rto.detail) == (
        5,
        "nic0",
        ev_kinds.RTO,
        0x101,
        {"backoff": 2, "blamed": "ack"},
    )
    assert (probe.plane, probe.ev, probe.qpn, probe.detail) == (1, 0x1234, 0x101, None)
    assert (rtx.kind, rtx.psn, rtx.detail) == (
        ev_kinds.RETRANSMIT,
        42,
        {"reason": "go_back_n", "packets": 3},
    )


def test_the_retransmit_record_has_one_home() -> None:
    """Go-back-N and the selective-repeat sender both queue retransmissions; only
    ConnectionLog.retransmit writes the record."""
    root = Path(nic_emu.__file__).parent
    writers = [
        p.relative_to(root).as_posix()
        for p in sorted(root.rglob("*.py"))
        if re.search(r"\bRETRANSMIT\b", p.read_text(encoding="utf-8")) and p.name != "event_log.py"
    ]
    assert writers == ["connection/records.py"]


def test_the_ev_state_record_is_about_evs_with_the_states_names() -> None:
    log = EventLog()
    clog = ConnectionLog(log, "nic0", 0x101)
    e = EvEntry(ev=0x1234, plane=1, path=(1, "t1"))
    e.last_tx_ns = 40
    clog.ev_state(50, e, EvState.GOOD, EvState.ASSUMED_BAD, "timeout")
    clog.about_ev(
        50,
        ev_kinds.EV_STATE,
        e,
        old=STATE_NAMES[EvState.GOOD],
        new=STATE_NAMES[EvState.ASSUMED_BAD],
        reason="timeout",
        last_tx_ns=40,
    )
    fast, slow = log.records
    assert fast == slow and fast.to_json() == slow.to_json()
    assert list(fast.detail or {}) == ["old", "new", "reason", "last_tx_ns"]
    assert (fast.kind, fast.plane, fast.ev, fast.detail["new"]) == (  # type: ignore[index]
        ev_kinds.EV_STATE,
        1,
        0x1234,
        "ASSUMED_BAD",
    )


def test_counters_read_as_the_dict_they_replace() -> None:
    """Every name of COUNTERS, in that order, from 0: what dict.fromkeys(COUNTERS, 0)
    gave, as a dict, as JSON and by key."""
    c = ConnectionCounters()
    assert dict(c) == dict.fromkeys(COUNTERS, 0) and list(dict(c)) == list(COUNTERS)
    assert list(c) == list(c.keys()) == list(COUNTERS) and len(c) == len(COUNTERS) == 33
    assert json.dumps(dict(c)) == json.dumps(dict.fromkeys(COUNTERS, 0))
    assert isinstance(c, Mapping) and c == dict.fromkeys(COUNTERS, 0)
    assert all(c[name] == 0 and type(c[name]) is int for name in COUNTERS)


def test_counters_are_live_and_written_by_name_or_attribute() -> None:
    c = ConnectionCounters()
    snapshot = c.as_dict()
    c.rx_data += 1
    c.bytes_placed += 4096
    c["losses_" + "timeout"] += 3  # the loss detectors' reasons, by name
    c["rto_silent"] += 1
    assert (c["rx_data"], c["bytes_placed"], c.losses_timeout, c.rto_silent) == (1, 4096, 3, 1)
    assert snapshot == dict.fromkeys(COUNTERS, 0)  # a copy: it does not follow
    want = dict.fromkeys(COUNTERS, 0) | {
        "rx_data": 1,
        "bytes_placed": 4096,
        "losses_timeout": 3,
        "rto_silent": 1,
    }
    assert dict(c.items()) == want and list(c.values()) == list(want.values())
    assert c == want and c != dict.fromkeys(COUNTERS, 0)
    other = ConnectionCounters()
    assert other != c
    for name, value in want.items():
        other[name] = value
    assert other == c and repr(other) == f"ConnectionCounters({want!r})"
    c.bytes_placed = 2**62  # C integers hold any count of a run (below 2**63)
    assert c["bytes_placed"] == 2**62


def test_counters_have_no_other_names() -> None:
    c = ConnectionCounters()
    with pytest.raises(KeyError):
        c["rx_frames"]  # a NIC's counter, not a connection's
    with pytest.raises(KeyError):
        c["losses_nothing"] = 1
    assert "rx_frames" not in c and "rx_data" in c and c.get("rx_frames", -1) == -1
    assert c.get("tx_data") == 0 and dict(c) == dict.fromkeys(COUNTERS, 0)
    with pytest.raises(TypeError):
        hash(c)  # mutable, like the dict it reads as


def test_a_nics_counters_read_as_their_dict_and_never_equal_a_connections() -> None:
    nic = NicCounters()
    assert isinstance(nic, Counters) and isinstance(nic, Mapping)
    assert dict(nic) == dict.fromkeys(NIC_COUNTERS, 0) and list(nic) == list(NIC_COUNTERS)
    nic.rx_frames += 2
    nic["paths_held"] += 1
    assert nic == dict.fromkeys(NIC_COUNTERS, 0) | {"rx_frames": 2, "paths_held": 1}
    assert repr(nic).startswith("NicCounters({'rx_frames': 2, ")
    with pytest.raises(KeyError):
        nic["rx_data"]  # a connection's counter, not a NIC's
    assert NicCounters() != ConnectionCounters() and NicCounters() == NicCounters()
