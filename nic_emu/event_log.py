"""Timestamped observability records of the NIC cores.

Every EV state change, retransmission, loss, NACK, probe and port event is appended to
an :class:`EventLog` as an :class:`EventRecord`; data-packet transmissions are added
when ``NicConfig.trace_packets`` is on (they are what :mod:`nic_emu.analysis` needs
to compute repath times). Records serialise to JSON lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from json.encoder import JSONEncoder, c_make_encoder, encode_basestring_ascii
from pathlib import Path
from typing import IO, Any

from nic_emu.exceptions import AnalysisError

# Event kinds. One constant per kind so producers and analyses cannot drift apart.
EV_STATE = "ev_state"  # an EV changed state: detail old, new, reason
EV_FLOOR_HOLD = "ev_floor_hold"  # an EV would have gone ASSUMED_BAD but the floor kept it
TX = "tx"  # a data packet left (trace_packets only): detail bytes, rtx
LOSS = "loss"  # a data packet was declared lost: detail sent_ns, reason
RETRANSMIT = "retransmit"  # a PSN was queued for retransmission: detail reason
NACK_TX = "nack_tx"  # receiver sent a NACK: detail reason
NACK_RX = "nack_rx"  # sender got a NACK: detail reason
PROBE_TX = "probe_tx"  # an EV probe left
PROBE_OK = "probe_ok"  # an EV probe was answered: detail successes
PROBE_LOST = "probe_lost"  # an EV probe went unanswered for a probe interval
PORT_DOWN = "port_down"  # a local port (plane) went down
PORT_UP = "port_up"  # a local port (plane) came up
REMOTE_PORT = "remote_port"  # a peer's port-status bitmap changed: detail up
PATH_SUSPECT = "path_suspect"  # a path quarantined at its first overdue packet: detail sent_ns
PATH_CLEARED = "path_cleared"  # a quarantined path delivered again: detail by, suspect_ns
RTO = "rto"  # a retransmission timeout fired: detail backoff, blamed
CONN_FAILED = "conn_failed"  # a connection moved to the error state: detail reason, message
WRITE_DONE = "write_done"  # a WRITE was fully acknowledged at the sender
WRITE_RECEIVED = "write_received"  # a WRITE was fully placed at the receiver
RX_DROP = "rx_drop"  # a packet from the wire was dropped: detail reason


#: the form of a record's JSON line: ``json.dumps(data, sort_keys=True, separators=(",", ":"))``
LINE_ENCODER = JSONEncoder(sort_keys=True, separators=(",", ":"))
# That encoder's C core (the ``_json`` module's), made once instead of once per line as
# ``json.dumps`` does, and without the cycle check's bookkeeping (its ``markers``): a
# line is the same text. Any error (a cycle is a RecursionError here, not the
# reference's ValueError) sends the record to ``json.dumps``, which raises its own.
_C_LINE = (
    c_make_encoder(
        None,
        LINE_ENCODER.default,
        encode_basestring_ascii,
        None,
        LINE_ENCODER.key_separator,
        LINE_ENCODER.item_separator,
        True,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
    if c_make_encoder is not None
    else None
)


def json_line(data: dict[str, Any]) -> str:
    """``data`` as one JSON line (no newline): sorted keys, no spaces, ASCII; the text of
    ``json.dumps(data, sort_keys=True, separators=(",", ":"))`` and its errors."""
    if _C_LINE is None:
        return json.dumps(data, sort_keys=True, separators=(",", ":"))
    try:
        return "".join(_C_LINE(data, 0))
    except Exception:  # the reference raises the error to report
        return json.dumps(data, sort_keys=True, separators=(",", ":"))


@dataclass(slots=True)
class EventRecord:
    """One observation. ``nic`` names the NIC; absent fields are ``None``."""

    t_ns: int
    nic: str
    kind: str
    qpn: int | None = None
    plane: int | None = None
    ev: int | None = None
    psn: int | None = None
    detail: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t_ns": self.t_ns, "nic": self.nic, "kind": self.kind}
        if self.qpn is not None:
            out["qpn"] = self.qpn
        if self.plane is not None:
            out["plane"] = self.plane
        if self.ev is not None:
            out["ev"] = self.ev
        if self.psn is not None:
            out["psn"] = self.psn
        if self.detail:
            out.update(self.detail)
        return out

    def to_json(self) -> str:
        return json_line(self.as_dict())


class EventLog:
    """An append-only list of records, shared by any number of NIC cores."""

    def __init__(self) -> None:
        self.records: list[EventRecord] = []

    def record(
        self,
        t_ns: int,
        nic: str,
        kind: str,
        *,
        qpn: int | None = None,
        plane: int | None = None,
        ev: int | None = None,
        psn: int | None = None,
        **detail: Any,
    ) -> None:
        self.records.append(EventRecord(t_ns, nic, kind, qpn, plane, ev, psn, detail or None))

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[EventRecord]:
        return iter(self.records)

    def of_kind(self, *kinds: str) -> list[EventRecord]:
        wanted = set(kinds)
        return [r for r in self.records if r.kind in wanted]

    def write_jsonl(self, target: str | Path | IO[str]) -> int:
        """Write every record as one JSON line; returns the number written."""
        if isinstance(target, str | Path):
            with open(target, "w", encoding="utf-8") as handle:
                return self.write_jsonl(handle)
        for rec in self.records:
            target.write(rec.to_json())
            target.write("\n")
        return len(self.records)


def read_jsonl(lines: Iterable[str]) -> list[EventRecord]:
    """Parse JSON lines written by :meth:`EventLog.write_jsonl` back into records."""
    out: list[EventRecord] = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise AnalysisError(f"event line {number} is not JSON: {exc}") from None
        if not isinstance(data, dict) or not {"t_ns", "nic", "kind"} <= data.keys():
            raise AnalysisError(f"event line {number} lacks t_ns, nic or kind: {raw.strip()[:80]}")
        base = {k: data.pop(k, None) for k in ("t_ns", "nic", "kind", "qpn", "plane", "ev", "psn")}
        out.append(EventRecord(detail=data or None, **base))
    return out
