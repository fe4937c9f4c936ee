"""The nic-emu process's event log file: bounded in size, bursts aggregated.

During failures a NIC emits bursts of records that differ only in their EV (a probe round
sends and loses one probe per retired EV, all at one timestamp). :func:`aggregate` folds
such a burst into one record with ``count`` and the first :data:`EVS_SHOWN` EVs.
:class:`EventFile` appends JSON lines and rotates the file when it passes ``max_bytes``:
the previous file becomes ``<name>.1`` (replacing an older one), so a NIC's log never
takes more than twice ``max_bytes`` on disk (docs/nic-emu.md section 12).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO

from nic_emu.event_log import EventRecord

# Detail fields that may differ inside a burst: the aggregate keeps their largest value
# (``ev_state.last_tx_ns``: the last data packet sent on any EV of the burst).
MERGED_MAX = ("last_tx_ns",)
EVS_SHOWN = 8  # EVs listed in an aggregated record (``count`` says how many there were)
DEFAULT_EVENTS_MAX_BYTES = 2 << 20  # [P] per file; with the rotated one, 4 MiB per NIC
MIN_EVENTS_MAX_BYTES = 4096  # one file must hold at least a few records


def aggregate(records: list[EventRecord]) -> list[EventRecord]:
    """Records equal in everything but their EV (and :data:`MERGED_MAX` fields), at the
    same time, become one record (at the place of the first) with ``count`` and ``evs``;
    the rest pass unchanged."""
    if len(records) < 2:
        return list(records)
    groups: dict[tuple[object, ...], list[EventRecord]] = {}
    order: list[tuple[object, ...]] = []
    for rec in records:
        detail = rec.detail
        key = (
            rec.t_ns,
            rec.nic,
            rec.kind,
            rec.qpn,
            rec.plane,
            rec.psn,
            rec.ev is None,
            _detail_key(detail),
        )
        found = groups.get(key)
        if found is None:
            groups[key] = [rec]
            order.append(key)
        else:
            found.append(rec)
    out: list[EventRecord] = []
    for key in order:
        group = groups[key]
        first = group[0]
        if len(group) == 1 or first.ev is None:
            out.extend(group)
            continue
        detail = dict(first.detail or {})
        for name in MERGED_MAX:
            if name in detail:
                detail[name] = max((r.detail or {}).get(name, detail[name]) for r in group)
        detail["count"] = len(group)
        detail["evs"] = [r.ev for r in group[:EVS_SHOWN]]
        out.append(
            EventRecord(
                first.t_ns, first.nic, first.kind, first.qpn, first.plane, None, first.psn, detail
            )
        )
    return out


def _detail_key(detail: dict[str, object] | None) -> str:
    if not detail:
        return ""
    kept = {k: v for k, v in detail.items() if k not in MERGED_MAX}
    return json.dumps(kept, sort_keys=True, default=str)


class EventFile:
    """Append-only JSON lines at ``path``, rotated to ``path.1`` past ``max_bytes``."""

    def __init__(self, path: Path, max_bytes: int = DEFAULT_EVENTS_MAX_BYTES) -> None:
        self.path = path
        self.rotated = path.with_name(path.name + ".1")
        self.max_bytes = max_bytes
        self.rotations = 0
        self.aggregated = 0  # records folded into another one
        self._handle: IO[str] | None = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self.size = self._handle.tell()

    def write(self, records: list[EventRecord]) -> int:
        """Append ``records`` (aggregated); returns how many lines were written. OSError
        propagates (the caller decides what a failed write means)."""
        if self._handle is None:
            raise OSError(f"{self.path} is closed")
        lines = aggregate(records)
        self.aggregated += len(records) - len(lines)
        text = "".join(rec.to_json() + "\n" for rec in lines)
        if self.size and self.size + len(text) > self.max_bytes:
            self._rotate()
        self._handle.write(text)
        self._handle.flush()
        self.size += len(text.encode("utf-8"))
        return len(lines)

    def _rotate(self) -> None:
        assert self._handle is not None
        self._handle.close()
        self._handle = None
        os.replace(self.path, self.rotated)
        self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        self.size = 0
        self.rotations += 1

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
