"""A record's JSON line: the text and the errors of ``json.dumps`` with sorted keys."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from nic_emu import event_log
from nic_emu.event_log import EV_STATE, EventLog, EventRecord, json_line


def reference(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return rng.randrange(-(1 << 70), 1 << 70)
    if kind == 1:
        return rng.choice((0.1, -2.5e300, 1e-7, float("inf"), float("-inf"), float("nan")))
    if kind == 2:
        return "".join(rng.choice('ab"\\\n\té€\U0001f600\x00/') for _ in range(rng.randrange(6)))
    if kind == 3:
        return rng.choice((True, False, None))
    if kind == 4:
        return rng.choice((EV_STATE, "GOOD", "SKIP"))
    if kind == 5:
        return rng.randrange(300)
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 7:
        return tuple(random_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    return {f"k{rng.randrange(5)}": random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_lines_are_json_dumps_text() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        data = {
            rng.choice(("t_ns", "nic", "kind", "ev", "z", "a", "é")): random_value(rng)
            for _ in range(rng.randrange(1, 8))
        }
        assert json_line(data) == reference(data)
    log = EventLog()
    log.record(5, "nic0", EV_STATE, qpn=3, plane=1, ev=7, old="GOOD", new="SKIP", reason="ecn")
    log.record(6, "nic1", "tx", psn=2)
    for rec in log:
        assert rec.to_json() == reference(rec.as_dict())
    assert log.records[1].to_json() == '{"kind":"tx","nic":"nic1","psn":2,"t_ns":6}'


def test_errors_are_json_dumps_errors() -> None:
    circular: dict[str, Any] = {}
    circular["self"] = circular
    with pytest.raises(ValueError, match="Circular reference detected"):
        json_line(circular)
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable"):
        json_line({"a": object()})
    with pytest.raises(TypeError, match="not supported between instances"):
        json_line({"a": 1, 2: 3})  # type: ignore[dict-item]
    rec = EventRecord(1, "nic0", "tx", detail={"what": {1, 2}})
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        rec.to_json()


def test_without_the_c_encoder_lines_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"t_ns": 9, "nic": "n", "kind": EV_STATE, "old": "GOOD", "x": [1.5, None]}
    fast = json_line(data)
    monkeypatch.setattr(event_log, "_C_LINE", None)
    assert json_line(data) == fast == reference(data)
