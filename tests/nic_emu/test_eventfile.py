"""The process's event log file: bursts aggregated, size bounded by rotation."""

from __future__ import annotations

from pathlib import Path

import pytest

from nic_emu.event_log import EventRecord, read_jsonl
from nic_emu.eventfile import EVS_SHOWN, EventFile, aggregate
from nic_emu.exceptions import ServeConfigError
from nic_emu.serve_config import parse_serve_config

from .serve_helpers import free_udp_ports, nic_config


def _probe_burst(n: int, t: int = 5, kind: str = "probe_tx") -> list[EventRecord]:
    return [EventRecord(t, "nic0", kind, 0x100, i % 2, 0x1000 + i) for i in range(n)]


def test_a_burst_differing_only_in_ev_becomes_one_record_with_a_count() -> None:
    burst = _probe_burst(8000) + _probe_burst(3, kind="probe_lost")
    out = aggregate(burst)
    counts = [(r.kind, r.plane, r.detail["count"] if r.detail else 1) for r in out]
    assert counts == [
        ("probe_tx", 0, 4000),
        ("probe_tx", 1, 4000),
        ("probe_lost", 0, 2),
        ("probe_lost", 1, 1),  # a single record stays as it was
    ]
    assert out[-1] == burst[-2]  # probe_lost i=1 (plane 1)
    assert out[0].ev is None and out[0].detail["evs"] == [0x1000 + 2 * i for i in range(EVS_SHOWN)]  # type: ignore[index]
    assert sum(r.detail["count"] if r.detail else 1 for r in out) == len(burst)


def test_records_that_differ_otherwise_are_kept_apart_and_in_order() -> None:
    recs = [
        EventRecord(1, "nic0", "ev_state", 0x100, 0, 7, None, {"new": "ASSUMED_BAD"}),
        EventRecord(1, "nic0", "ev_state", 0x100, 0, 8, None, {"new": "GOOD"}),
        EventRecord(2, "nic0", "probe_tx", 0x100, 0, 7),
        EventRecord(1, "nic0", "rto", 0x100, None, None, None, {"backoff": 1}),
    ]
    assert aggregate(recs) == recs


def test_the_file_rotates_past_its_size_and_loses_nothing_of_the_last_two(tmp_path: Path) -> None:
    path = tmp_path / "nic0.events.jsonl"
    log = EventFile(path, max_bytes=4096)
    written = 0
    for t in range(400):
        written += log.write([EventRecord(t, "nic0", "rto", 0x100, None, None, None, {"n": t})])
    log.close()
    assert written == 400 and log.rotations > 0
    rotated = path.with_name(path.name + ".1")
    assert path.stat().st_size <= 4096 and rotated.stat().st_size <= 4096
    old = read_jsonl(rotated.read_text().splitlines())
    new = read_jsonl(path.read_text().splitlines())
    times = [r.t_ns for r in old + new]
    assert times == list(range(times[0], 400))  # the newest records, contiguous


def _config(tmp_path: Path, **extra: object) -> dict[str, object]:
    ports = free_udp_ports(2)
    return {**nic_config(tmp_path, "nic0", {0: (ports[0], ports[1])}), **extra}


def test_events_max_bytes_is_read_and_checked(tmp_path: Path) -> None:
    assert (
        parse_serve_config(_config(tmp_path, events_max_bytes=1 << 20)).events_max_bytes == 1 << 20
    )
    for bad in (0, 100, "big", True, 1.5):
        with pytest.raises(ServeConfigError, match="events_max_bytes") as info:
            parse_serve_config(_config(tmp_path, events_max_bytes=bad))
        assert "4096" in str(info.value)
    assert parse_serve_config(_config(tmp_path)).events_max_bytes == 2 << 20  # the default


def test_a_path_retirement_burst_keeps_the_latest_send_time() -> None:
    recs = [
        EventRecord(
            9, "nic0", "ev_state", 0x100, 1, ev, None, {"new": "ASSUMED_BAD", "last_tx_ns": t}
        )
        for ev, t in ((1, 5), (2, 8), (3, -1))
    ]
    (one,) = aggregate(recs)
    assert one.detail == {"new": "ASSUMED_BAD", "last_tx_ns": 8, "count": 3, "evs": [1, 2, 3]}
