"""Measurements computed from event records (live :class:`EventLog` or JSON lines).

The **repath time** of a failure is the time from the first packet lost on the failed
path (its send time) to the last packet sent on that path: how long the sender kept
feeding a path that had stopped delivering. It needs the per-packet ``tx`` records, so
the NICs must run with ``NicConfig(trace_packets=True)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from nic_emu.event_log import LOSS, TX, EventRecord
from nic_emu.exceptions import AnalysisError


@dataclass(frozen=True, slots=True)
class Repath:
    """The repath measurement of one failed path (times in ns, module docstring); ``repath_ns``
    is the repath time."""

    first_lost_sent_ns: int  # send time of the first packet lost on the failed path
    last_sent_ns: int  # time of the last data packet sent on the failed path
    packets_lost: int  # loss records on the failed path after the fault
    packets_sent_after_fault: int  # data packets sent on the failed path after the fault

    @property
    def repath_ns(self) -> int:
        return max(0, self.last_sent_ns - self.first_lost_sent_ns)


def repath_time(
    records: Iterable[EventRecord],
    failed_evs: Collection[int],
    *,
    fault_ns: int = 0,
    nic: str | None = None,
    qpn: int | None = None,
) -> Repath:
    """Repath measurement for the EVs that cross a failed path.

    ``failed_evs``: the EVs whose path the failure cut (e.g. every EV that
    ``AddressPlan.path_for_ev`` routes over a dead link). ``fault_ns``: when the
    fault was injected; earlier records are ignored. ``nic`` / ``qpn`` restrict the
    measurement to one sender / connection.
    """
    failed = set(failed_evs)
    if not failed:
        raise AnalysisError("repath_time needs at least one EV of the failed path")
    saw_tx = False
    first_lost: int | None = None
    lost = 0
    last_sent = -1
    sent_after = 0
    for rec in records:
        if (nic is not None and rec.nic != nic) or (qpn is not None and rec.qpn != qpn):
            continue
        kind = rec.kind
        if kind == TX:
            saw_tx = True
            if rec.ev in failed and rec.t_ns >= fault_ns:
                sent_after += 1
                if rec.t_ns > last_sent:
                    last_sent = rec.t_ns
        elif kind == LOSS and rec.ev in failed:
            sent_ns = (rec.detail or {}).get("sent_ns", rec.t_ns)
            if sent_ns >= fault_ns:
                lost += 1
                if first_lost is None or sent_ns < first_lost:
                    first_lost = sent_ns
    if not saw_tx:
        raise AnalysisError(
            "the event log has no per-packet 'tx' records; run the NICs with "
            "NicConfig(trace_packets=True) to measure repath time"
        )
    if first_lost is None:
        raise AnalysisError(
            f"no packet sent on the failed EVs after t={fault_ns} ns was lost; "
            "the failure never hit this traffic"
        )
    return Repath(first_lost, last_sent, lost, sent_after)


def tx_per_plane(records: Iterable[EventRecord], *, nic: str | None = None) -> Counter[int]:
    """Data packets sent per plane (from ``tx`` records)."""
    out: Counter[int] = Counter()
    for rec in records:
        if rec.kind == TX and (nic is None or rec.nic == nic) and rec.plane is not None:
            out[rec.plane] += 1
    return out


def count_kinds(records: Iterable[EventRecord]) -> Counter[str]:
    """How many records of each kind."""
    return Counter(rec.kind for rec in records)
