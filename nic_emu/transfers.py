"""Transfers of a ``nic-emu serve`` process: the sending side of ``send`` and the receiving
side (queue pairs other NICs opened out of band), with the measurements the control
protocol reports (docs/nic-emu-process.md).

Out-of-band setup [P] (RDMA QPs are set up out of band; the processes agree on this
instead of exchanging messages):

- **Same QPN at both ends.** A sender opens QPN q and writes to the receiver's QPN q; the
  receiver creates its side when the first packet for q arrives, with the peer's QPN = q
  and both initial PSNs 0. :class:`QpnPlan` makes q unique across the fabric: the
  sender's NIC index is part of it.
- **Mode in the QPN.** Bit 23 set = the RoCE baseline (go-back-N receiver), clear = MRC.
- **Memory.** The sender writes a connection's share of the data at VA 0.. with R_Key =
  QPN, made as it is sent (:mod:`nic_emu.datasource`, :class:`nic_emu.streams.StreamPayload`);
  the receiver checks it into a running SHA-256 per (source NIC, QPN)
  (:class:`nic_emu.streams.StreamReceiver`), VAs up to :data:`MAX_REGION_BYTES`, holding
  only packets that arrive beyond a gap. Neither side holds a transfer whole: what they
  hold (unacknowledged payloads, out-of-order payloads) counts against the NIC's
  :class:`MemoryBudget`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nic_emu import event_log as ev_kinds
from nic_emu.analysis import Repath
from nic_emu.config import TransportMode
from nic_emu.connection import Connection
from nic_emu.event_log import EventRecord
from nic_emu.exceptions import ConnectionSetupError
from nic_emu.streams import MemoryBudget, StreamReceiver  # the budget: compiled with the sinks

QPN_BITS = 24
QPN_ROCE_BIT = 1 << (QPN_BITS - 1)
FIRST_SEQUENCE = 0x100  # keeps every QPN clear of the reserved ones below 0x100
MAX_REGION_BYTES = 1 << 30  # [P] one connection's share of a transfer (its VA range), 1 GiB
TIMELINE_STEP_NS = 10_000_000  # delivery timeline resolution (10 ms)
DATA_STEP_BYTES = 1 << 20  # a send's data is digested this much per event-loop step
NS_PER_S = 1_000_000_000
# [P] A transfer not done by then fails, naming the paths it found down; until then a
# connection without a usable EV keeps probing (with backoff). Generous: the process
# fabric is slow and a user may cut and restore links by hand in the meantime.
DEFAULT_TRANSFER_DEADLINE_S = 300.0


class QpnPlan:
    """QPN = mode bit | source NIC index | sequence number (see the module docstring)."""

    def __init__(self, nic_count: int) -> None:
        self.index_bits = max(1, (nic_count - 1).bit_length())
        self.sequence_bits = QPN_BITS - 1 - self.index_bits
        if self.sequence_bits < 9:
            raise ConnectionSetupError(f"{nic_count} NICs leave too few QPN bits per NIC")
        self.sequences = (1 << self.sequence_bits) - FIRST_SEQUENCE

    def qpn(self, nic_index: int, sequence: int, mode: TransportMode) -> int:
        """The QPN of this NIC's ``sequence``-th queue pair (0-based) in ``mode``."""
        if not 0 <= sequence < self.sequences:
            raise ConnectionSetupError(
                f"all {self.sequences} queue pair numbers of this NIC are used; "
                "restart the NIC process"
            )
        mode_bit = QPN_ROCE_BIT if mode is TransportMode.ROCE else 0
        return mode_bit | nic_index << self.sequence_bits | (FIRST_SEQUENCE + sequence)

    @staticmethod
    def mode_of(qpn: int) -> TransportMode:
        return TransportMode.ROCE if qpn & QPN_ROCE_BIT else TransportMode.MRC


# ---------------------------------------------------------------------- repath events


@dataclass(slots=True)
class _Episode:
    """A path (plane, T1) of one connection out of service: from its first EV taken out
    (ASSUMED_BAD) until probes revive one of them."""

    qpn: int
    path: tuple[int, ...]
    ev: int  # the first EV of the path taken out
    plane: int
    start_ns: int
    reason: str
    last_sent_ns: int
    first_lost_sent_ns: int | None
    lost: int
    evs: int = 1


class RepathTracker:
    """Repath events from the event records of some connections, computed as they stream.

    One event per episode of a path (plane, T1: what the EVs of a connection cross) losing
    its EVs: from the send time of the first packet lost on any of its EVs to the last data
    packet sent on any EV of it that was then taken out (the ``last_tx_ns`` of the
    ``ev_state`` records) -- :func:`nic_emu.analysis.repath_time` for the EVs of that path,
    without needing per-packet ``tx`` records.
    """

    def __init__(self) -> None:
        self._paths: dict[tuple[int, int], tuple[int, ...]] = {}  # (QPN, EV) -> path
        self._losses: dict[tuple[int, tuple[int, ...]], tuple[int, int]] = {}  # not yet out
        self._open: dict[tuple[int, tuple[int, ...]], _Episode] = {}
        self._episodes: list[_Episode] = []

    def watch(self, conn: Connection) -> None:
        """Follow ``conn`` (its EVs, backups included, and the paths they cross)."""
        for entry in conn.evs.entries():
            path = entry.path if isinstance(entry.path, tuple) else (entry.plane, entry.ev)
            self._paths[(conn.qpn, entry.ev)] = path

    def feed(self, records: Iterable[EventRecord]) -> None:
        paths = self._paths
        for rec in records:
            if rec.ev is None or rec.qpn is None:
                continue
            path = paths.get((rec.qpn, rec.ev))
            if path is None:
                continue
            key = (rec.qpn, path)
            detail = rec.detail or {}
            if rec.kind == ev_kinds.LOSS:
                sent = int(detail.get("sent_ns", rec.t_ns))
                episode = self._open.get(key)
                if episode is not None:
                    episode.lost += 1
                    if episode.first_lost_sent_ns is None or sent < episode.first_lost_sent_ns:
                        episode.first_lost_sent_ns = sent
                else:
                    first, count = self._losses.get(key, (sent, 0))
                    self._losses[key] = (min(first, sent), count + 1)
            elif rec.kind == ev_kinds.EV_STATE:
                if detail.get("new") == "ASSUMED_BAD":
                    last_tx = int(detail.get("last_tx_ns", -1))
                    episode = self._open.get(key)
                    if episode is not None:
                        episode.evs += 1
                        episode.last_sent_ns = max(episode.last_sent_ns, last_tx)
                        continue
                    first, count = self._losses.pop(key, (None, 0))
                    episode = _Episode(
                        rec.qpn,
                        path,
                        rec.ev,
                        rec.plane if rec.plane is not None else -1,
                        rec.t_ns,
                        str(detail.get("reason", "")),
                        last_tx,
                        first,
                        count,
                    )
                    self._open[key] = episode
                    self._episodes.append(episode)
                elif detail.get("old") == "ASSUMED_BAD":
                    self._open.pop(key, None)  # the path delivers again
                    self._losses.pop(key, None)

    def close(self) -> None:
        """No more records will come (the transfer is over): drop the per-EV maps, keep
        the episodes for reports."""
        self._paths.clear()
        self._losses.clear()
        self._open.clear()

    def events(self, origin_ns: int) -> list[dict[str, Any]]:
        """``[{"ev", "plane", "repath_time_us", ...}]``; ``t_s`` counts from ``origin_ns``."""
        out = []
        for e in self._episodes:
            if e.first_lost_sent_ns is None or e.last_sent_ns < 0:
                continue  # the path went out of service without losing this traffic
            repath = Repath(e.first_lost_sent_ns, e.last_sent_ns, e.lost, 0)
            out.append(
                {
                    "ev": e.ev,
                    "plane": e.plane,
                    "repath_time_us": repath.repath_ns / 1000,
                    "path": list(e.path),
                    "evs": e.evs,
                    "qpn": e.qpn,
                    "t_s": (e.start_ns - origin_ns) / NS_PER_S,
                    "reason": e.reason,
                    "packets_lost": e.lost,
                }
            )
        return out


# ---------------------------------------------------------------------- sending side


def split(size: int, count: int) -> list[tuple[int, int]]:
    """(offset, length) of ``count`` nearly equal shares of ``size`` bytes."""
    return [(size * i // count, size * (i + 1) // count - size * i // count) for i in range(count)]


@dataclass(slots=True)
class Part:
    """One connection's share of a transfer: one RDMA WRITE."""

    conn: Connection
    offset: int
    length: int
    sha256: str
    done: bool = False
    failed: str | None = None
    shortfall: int = 0  # bytes the short last packet lacks, until the timeline counts them

    def __post_init__(self) -> None:
        mtu = self.conn.cfg.mtu_payload
        self.shortfall = self.packets(mtu) * mtu - self.length

    @property
    def acked_packets(self) -> list[int]:
        """Acknowledged data packets per plane."""
        return self.conn.acked_per_plane()

    def packets(self, mtu: int) -> int:
        return max(1, -(-self.length // mtu))


@dataclass
class SendTransfer:
    """A ``send`` request: ``data`` written to NIC ``to`` over ``parts`` (one per QP)."""

    id: int
    nic: str
    to: str
    mode: TransportMode
    seed: int
    size: int
    mtu: int
    planes: int
    requested_ns: int
    data: str = "random"  # the data source's spec (nic_emu.datasource)
    deadline_ns: int = 1 << 62  # not done by then: the transfer fails
    started_ns: int | None = None  # when the WRITEs were posted (the data is ready)
    sha256: str | None = None  # known once the data is made
    error: str | None = None  # the transfer could not be set up
    parts: list[Part] = field(default_factory=list)
    finished_ns: int | None = None
    repaths: RepathTracker = field(default_factory=RepathTracker)
    timeline: list[list[float | int]] = field(default_factory=list)
    plane_bytes: list[int] = field(default_factory=list)  # reported in the timeline so far
    shortfall: list[int] = field(default_factory=list)  # per plane, short last packets
    # Per path (plane, T1): [t_s, plane, T1, bytes] (acknowledged packets x MTU payload)
    path_timeline: list[list[Any]] = field(default_factory=list)
    path_packets: dict[object, int] = field(default_factory=dict)  # reported so far

    def __post_init__(self) -> None:
        self.plane_bytes = [0] * self.planes
        self.shortfall = [0] * self.planes

    # -- progress -------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.finished_ns is not None

    @property
    def failed(self) -> str | None:
        if self.error is not None:
            return self.error
        for part in self.parts:
            if part.failed is not None:
                return part.failed
        return None

    def part_of(self, qpn: int) -> Part | None:
        for part in self.parts:
            if part.conn.qpn == qpn:
                return part
        return None

    def on_completed(self, qpn: int) -> None:
        part = self.part_of(qpn)
        if part is not None:
            part.done = True

    def on_failed(self, qpn: int, message: str) -> None:
        part = self.part_of(qpn)
        if part is not None and part.failed is None:
            part.failed = message

    def start(self, sha256: str, now: int) -> None:
        """The data is made and every part's WRITE is posted: time starts now."""
        self.sha256 = sha256
        self.started_ns = now

    def fail_setup(self, message: str, now: int) -> None:
        self.error = message
        self.finished_ns = now

    def finish_if_over(self, now: int) -> bool:
        """Mark the transfer finished once every part completed or failed."""
        if self.started_ns is None:
            return False
        if self.finished_ns is None and all(p.done or p.failed for p in self.parts):
            self.sample(now)
            self.finished_ns = now
            return True
        return False

    def bytes_acked(self) -> int:
        total = 0
        for part in self.parts:
            if part.done:
                total += part.length
            else:
                # Full packets until the last one is acknowledged (which completes it).
                total += min(part.length, sum(part.acked_packets) * self.mtu)
        return total

    def bytes_completed(self) -> int:
        return sum(p.length for p in self.parts if p.done)

    # -- per-plane delivery -----------------------------------------------------

    def _plane_targets(self) -> list[int]:
        """Bytes acknowledged per plane: acknowledged packets x MTU payload, less the
        short last packet of each completed part (counted where the most was delivered
        since the last sample, which always includes the plane of that last packet)."""
        packets = [0] * self.planes
        for part in self.parts:
            for plane, count in enumerate(part.acked_packets):
                packets[plane] += count
        targets = [packets[p] * self.mtu - self.shortfall[p] for p in range(self.planes)]
        for part in self.parts:
            if part.done and part.shortfall:
                fresh = sorted(
                    range(self.planes), key=lambda p: targets[p] - self.plane_bytes[p], reverse=True
                )
                for plane in fresh:
                    take = min(part.shortfall, max(0, targets[plane] - self.plane_bytes[plane]))
                    targets[plane] -= take
                    self.shortfall[plane] += take
                    part.shortfall -= take  # any rest waits for the next sample
                    if not part.shortfall:
                        break
        return targets

    def sample(self, now: int) -> None:
        """Append the bytes each plane delivered since the last sample to the timeline."""
        if self.finished_ns is not None or self.started_ns is None:
            return
        t_s = (now - self.started_ns) / NS_PER_S
        for plane, target in enumerate(self._plane_targets()):
            delta = target - self.plane_bytes[plane]
            if delta > 0:
                self.timeline.append([round(t_s, 6), plane, delta])
                self.plane_bytes[plane] = target
        counts: dict[object, int] = {}
        for part in self.parts:
            for path, n in part.conn.acked_per_path().items():
                counts[path] = counts.get(path, 0) + n
        for path, n in counts.items():
            delta = n - self.path_packets.get(path, 0)
            if delta > 0:
                plane, t1 = path if isinstance(path, tuple) else (None, path)
                self.path_timeline.append([round(t_s, 6), plane, t1, delta * self.mtu])
                self.path_packets[path] = n

    # -- report -----------------------------------------------------------------

    def report(self, now: int) -> dict[str, Any]:
        started = self.started_ns
        end = self.finished_ns if self.finished_ns is not None else now
        elapsed = max(0, end - started) / NS_PER_S if started is not None else 0.0
        acked = self.bytes_acked()
        counters = [p.conn.counters for p in self.parts]
        per_plane = self.plane_bytes if self.done else self._live_plane_bytes()
        return {
            "done": self.done,
            "failed": self.failed,
            "to": self.to,
            "mode": self.mode.value,
            "data": self.data,
            "connections": len(self.parts),
            "bytes_total": self.size,
            "bytes_acked": acked,
            "bytes_delivered_intact": self.bytes_completed(),
            "progress": acked / self.size,
            "preparing": started is None and self.error is None,
            "elapsed_s": elapsed,
            "started_ns": started,  # time.monotonic_ns() of the NIC process (system-wide)
            "deadline_s": (self.deadline_ns - self.requested_ns) / NS_PER_S,
            "goodput_gbps": acked * 8 / elapsed / 1e9 if elapsed > 0 else 0.0,
            "retransmissions": sum(c["tx_rtx"] for c in counters),
            "timeouts": sum(c["losses_timeout"] for c in counters),  # losses found by the RTO
            "nacks": sum(c["rx_nack"] for c in counters),
            "data_packets": sum(c["tx_data"] for c in counters),
            "per_plane_bytes": {str(p): n for p, n in enumerate(per_plane)},
            "repath_events": self.repaths.events(started if started is not None else now),
            "timeline": self.timeline,
            "path_timeline": self.path_timeline,
            "sha256": self.sha256,
            "parts": [
                {
                    "qpn": p.conn.qpn,
                    "bytes": p.length,
                    "offset": p.offset,
                    "sha256": p.sha256,
                    "done": p.done,
                    "failed": p.failed,
                }
                for p in self.parts
            ],
        }

    def _live_plane_bytes(self) -> list[int]:
        packets = [0] * self.planes
        for part in self.parts:
            for plane, count in enumerate(part.acked_packets):
                packets[plane] += count
        return [packets[p] * self.mtu - self.shortfall[p] for p in range(self.planes)]


# ---------------------------------------------------------------------- receiving side


@dataclass(slots=True)
class ReceivedMessage:
    """A WRITE this NIC received completely, and the SHA-256 of its bytes."""

    source: str
    qpn: int
    length: int
    sha256: str
    t_ns: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "from": self.source,
            "qpn": self.qpn,
            "bytes": self.length,
            "sha256": self.sha256,
            "complete": True,
        }


class ResponderQp:
    """A queue pair another NIC opened toward this one: its WRITEs are checked into a
    :class:`StreamReceiver` (a running digest), never held whole."""

    def __init__(self, budget: MemoryBudget, conn: Connection, source: str) -> None:
        self.budget = budget
        self.conn = conn
        self.source = source
        self.sink = StreamReceiver(conn.rx.recv.rcv_nxt, budget, MAX_REGION_BYTES)
        conn.attach_responder_sink(self.sink)
        self.complete_bytes = 0
        self.retired = False

    def message(self, t_ns: int) -> ReceivedMessage | None:
        """The oldest completed WRITE not reported yet (None: none is complete)."""
        found = self.sink.pop_message()
        if found is None:
            return None
        length, digest = found
        self.complete_bytes += length
        return ReceivedMessage(self.source, self.conn.qpn, length, digest, t_ns)

    def incomplete_bytes(self) -> int:
        return max(0, self.sink.fed_bytes + self.sink.held_bytes - self.complete_bytes)

    def release(self) -> None:
        self.sink.release()
        self.retired = True
