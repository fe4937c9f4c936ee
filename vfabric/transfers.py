"""Transfers: RDMA WRITEs from one NIC to another, checked byte for byte at the receiver.

Nothing holds a transfer whole (docs/virtual-fabric.md, "Memory in long runs"): its bytes
come from a lazy source (nic_emu's ``random`` data source, seeded per transfer), each
packet's payload made when the sender first segments it and kept until acknowledged
(:class:`SentData`, :class:`nic_emu.streams.StreamPayload`); the receiver compares what
it places, in PSN order, with the same bytes read again from the source at the message's
offset, a piece at a time (:class:`nic_emu.streams.ComparingReceiver`). No digest is made
during a run: a transfer's reported ``sha256`` is made from the source when asked
(:meth:`SentData.sha256`).
"""

from __future__ import annotations

import hashlib
import sys
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from nic_emu.config import TransportMode
from nic_emu.connection import Connection
from nic_emu.connection.host import ConnectionFailed, WriteCompleted, WriteReceived
from nic_emu.datasource import DataSource, RandomSource
from nic_emu.streams import ComparingReceiver, StreamPayload
from nic_emu.transfers import MemoryBudget
from vfabric.exceptions import TransferSetupError

TRANSPORTS = {"mrc": TransportMode.MRC, "roce": TransportMode.ROCE}
# The receiving sink's budget for payloads held beyond a gap: no limit (the receive
# window bounds them), so that no packet is refused that a memory region would take.
RECEIVE_BUDGET_BYTES = sys.maxsize
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()  # a transfer that never started sent nothing
# [P] A message's source pieces the sender has taken and its receiver (in the same process)
# has not yet compared: past this many, the message stops sharing them and its receiver
# reads its own copy of the source from where it is (a receiver that stopped comparing, a
# damaged message, holds no more than this). 64 pieces of PIECE_BYTES: 4 MiB, above the
# sender's lead in every bundled run (docs/virtual-fabric.md, "Fabric per event, round 5").
MAX_SHARED_PIECES = 64


def transfer_seed(seed: int, transfer_id: int) -> int:
    """The seed of a transfer's bytes, from the fabric seed and the transfer id."""
    digest = hashlib.sha256(f"vfabric:{seed}:{transfer_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def transfer_source(seed: int, transfer_id: int, nbytes: int) -> RandomSource:
    """The bytes a transfer sends, made lazily and reproducible from the fabric seed and
    the transfer id (nic_emu's ``random`` data source)."""
    return RandomSource(transfer_seed(seed, transfer_id), nbytes)


def split_sizes(nbytes: int, messages: int) -> list[int]:
    base, extra = divmod(nbytes, messages)
    return [base + (1 if i < extra else 0) for i in range(messages)]


def message_spans(nbytes: int, messages: int) -> list[tuple[int, int]]:
    """(offset, length) of each message of a transfer of ``nbytes`` split in ``messages``."""
    spans, offset = [], 0
    for size in split_sizes(nbytes, messages):
        spans.append((offset, size))
        offset += size
    return spans


class SentData:
    """A transfer's bytes as its sender takes them, one streamed WRITE per message: made
    lazily from ``source``, a piece at a time, for the sender (:meth:`payload`) and for
    the receiver's comparison (:meth:`expected`). Holds no bytes beyond the pieces being
    read, and makes no digest while they are sent.

    When both ends run in this process (:meth:`share`, before the first :meth:`payload`),
    the receiver compares with the very pieces the source made for the sender (immutable
    ``bytes``, not the frames), handed over in order, instead of making them a second
    time; a receiver whose next piece the sender has not taken (another process's sender,
    a payload past what was sent) or a message past :data:`MAX_SHARED_PIECES` reads the
    source itself from there on."""

    def __init__(self, source: DataSource, spans: list[tuple[int, int]]) -> None:
        end = 0
        for offset, length in spans:
            if offset != end or length < 1:
                raise TransferSetupError(
                    f"message spans must tile the data in order, got {spans[:8]!r}"
                )
            end = offset + length
        if end != source.size:
            raise TransferSetupError(
                f"message spans cover {end} bytes of a {source.size}-byte source"
            )
        self.source = source
        self.size = source.size
        self.spans = spans
        self._sha256: str | None = None  # made once, when first asked
        # per message: the pieces the sender took that its receiver has not compared yet
        # (None: not shared, the receiver reads the source)
        self._shared: list[deque[bytes] | None] = [None] * len(spans)
        if isinstance(source, RandomSource):
            source.mark([offset for offset, _ in spans])  # each message's reader starts at once

    def share(self) -> None:
        """The receiver runs in this process beside the sender: every message's pieces are
        handed to it as the sender takes them (call before the first :meth:`payload`)."""
        self._shared = [deque() for _ in self.spans]

    def payload(self, index: int, what: str) -> StreamPayload:
        """Message ``index``'s data, to post as one WRITE."""
        offset, length = self.spans[index]
        pieces = self.source.pieces(offset, length)
        if self._shared[index] is not None:
            pieces = self._handing(index, pieces)
        return StreamPayload(pieces, length, what)

    def _handing(self, index: int, pieces: Iterator[bytes]) -> Iterator[bytes]:
        """``pieces``, each also queued for message ``index``'s receiver while it shares."""
        shared = self._shared
        for piece in pieces:
            queue = shared[index]
            if queue is not None:
                if len(queue) < MAX_SHARED_PIECES:
                    queue.append(piece)
                else:  # the receiver lags (or stopped): it reads its own copy from here
                    shared[index] = None
                    queue.clear()
            yield piece

    def expected(self, index: int) -> StreamPayload:
        """Message ``index``'s data again, for the receiver to compare what it places with:
        the sender's pieces while they are shared, else its own reader of the source."""
        offset, length = self.spans[index]
        return StreamPayload(
            self._expected_pieces(index, offset, length),
            length,
            f"expected bytes of message {index}",
        )

    def _expected_pieces(self, index: int, offset: int, length: int) -> Iterator[bytes]:
        shared = self._shared
        made = 0
        try:
            while made < length:
                queue = shared[index]
                if not queue:  # not shared, or not taken by the sender: the source from here
                    shared[index] = None  # the sender queues no more for this message
                    yield from self.source.pieces(offset + made, length - made)
                    return
                piece = queue.popleft()
                made += len(piece)
                yield piece
        finally:  # done, or dropped by the receiver (the message ended): nothing kept
            queue = shared[index]
            if queue is not None:
                shared[index] = None
                queue.clear()

    def sha256(self) -> str:
        """SHA-256 of the transfer's bytes, made from the source (a piece at a time) the
        first time it is asked, outside the run; kept after."""
        if self._sha256 is None:
            whole = hashlib.sha256()
            for piece in self.source.pieces(0, self.size):
                whole.update(piece)
            self._sha256 = whole.hexdigest()
        return self._sha256


def receive_sink(receiver: Connection, rkey: int, va: int, sent: SentData) -> ComparingReceiver:
    """The receiving connection's check of what it places: each message compared byte for
    byte with ``sent``'s bytes of it, packets refused (``memory_access``) outside
    [va, va+size) or under another R_Key, as a registered region of that range would
    refuse them."""
    sent.share()
    sink = ComparingReceiver(
        receiver.rx.recv.rcv_nxt,
        MemoryBudget(RECEIVE_BUDGET_BYTES),
        va + sent.size,
        [length for _, length in sent.spans],
        sent.expected,
        min_va=va,
        rkey=rkey,
    )
    receiver.attach_responder_sink(sink)
    return sink


@dataclass
class Transfer:
    """One transfer and, once run, its results (see :attr:`as_dict`)."""

    id: int
    src: str
    dst: str
    nbytes: int
    messages: int
    transport: str
    start_ns: int
    background: bool = False
    sent: SentData | None = None  # the bytes sent, made lazily (None: not started)
    sender: Connection | None = None
    receiver: Connection | None = None
    sink: ComparingReceiver | None = None  # the receiver's check of what it places
    va: int = 0  # the receiver's VA of byte 0 (R_Key ``rkey``)
    rkey: int = 0
    wr_ids: list[int] = field(default_factory=list)
    message_offsets: list[tuple[int, int]] = field(default_factory=list)
    message_done_ns: list[int | None] = field(default_factory=list)  # acknowledged at sender
    message_received_ns: list[int | None] = field(default_factory=list)  # placed at receiver
    bytes_delivered: int = 0  # placed at the receiver (reported complete)
    bytes_verified: int = 0  # of those, equal to what was sent
    completion_ns: int | None = None
    failure: str | None = None

    @property
    def done(self) -> bool:
        return self.completion_ns is not None

    @property
    def finished(self) -> bool:
        """Done or failed: nothing more will happen to it."""
        return self.completion_ns is not None or self.failure is not None

    @property
    def intact(self) -> bool:
        return self.done and self.bytes_verified == self.nbytes

    def on_event(self, nic: str, event: object, now: int) -> None:
        if isinstance(event, WriteCompleted) and nic == self.src:
            index = self.wr_ids.index(event.wr_id) if event.wr_id in self.wr_ids else -1
            if index >= 0:
                self.message_done_ns[index] = event.t_ns
        elif isinstance(event, WriteReceived) and nic == self.dst:
            self._placed(event)
        elif isinstance(event, ConnectionFailed) and self.failure is None:
            self.failure = f"{nic}: {event.reason}: {event.message}"
        self._check_done(now)

    def _placed(self, event: WriteReceived) -> None:
        assert self.sink is not None
        # WRITEs complete in PSN order, so this one's check is the oldest not popped.
        received = self.sink.pop_checked()
        start = event.va - self.va
        for index, (offset, length) in enumerate(self.message_offsets):
            if offset == start and length == event.length:
                self.message_received_ns[index] = event.t_ns
                self.bytes_delivered += length
                if received == (index, length, True):
                    self.bytes_verified += length
                elif self.failure is None:
                    self.failure = f"message {index} arrived damaged (bytes differ from sent)"
                return
        if self.failure is None:
            self.failure = f"unexpected WRITE placed at va offset {start}, {event.length} bytes"

    def _check_done(self, now: int) -> None:
        if self.completion_ns is not None or self.failure is not None:
            return
        if all(t is not None for t in self.message_done_ns) and all(
            t is not None for t in self.message_received_ns
        ):
            self.completion_ns = max(
                max(t for t in self.message_done_ns if t is not None),
                max(t for t in self.message_received_ns if t is not None),
            )

    def as_dict(self, retransmitted_bytes: int = 0, *, sha256: bool = True) -> dict[str, Any]:
        """The results; ``sha256=False`` leaves out the data's digest (made from the
        source when asked: a pass over the whole transfer)."""
        sender = self.sender.counters if self.sender is not None else {}
        receiver = self.receiver.counters if self.receiver is not None else {}
        out: dict[str, Any] = {
            "id": self.id,
            "src": self.src,
            "dst": self.dst,
            "bytes": self.nbytes,
            "messages": self.messages,
            "transport": self.transport,
            "background": self.background,
            "start_ns": self.start_ns,
            "completion_ns": self.completion_ns,
            "duration_ns": None
            if self.completion_ns is None
            else self.completion_ns - self.start_ns,
            "message_completion_ns": list(self.message_done_ns),
            "message_received_ns": list(self.message_received_ns),
            "bytes_delivered": self.bytes_delivered,
            "bytes_verified": self.bytes_verified,
            "intact": self.intact,
            "sha256": "",  # in this place, made below unless left out
            "retransmitted_packets": int(sender.get("tx_rtx", 0)),
            "retransmitted_bytes": retransmitted_bytes,
            "nacks_sent": int(receiver.get("tx_nack", 0)),
            "nacks_received": int(sender.get("rx_nack", 0)),
            "trimmed_received": int(receiver.get("rx_trimmed", 0)),
            "ecn_echo_received": int(sender.get("ecn_echo_rx", 0)),
            "failure": self.failure,
        }
        if sha256:
            out["sha256"] = self.sent.sha256() if self.sent is not None else EMPTY_SHA256
        else:
            del out["sha256"]
        return out


def all_finished(foreground: list[Transfer]) -> Callable[[], bool]:
    """A check a run's stop condition calls after events: whether every transfer of
    ``foreground`` has :attr:`~Transfer.finished` (False when there are none). A transfer
    never unfinishes, so each call asks from the first one still running on, not every
    transfer every time."""
    first = 0  # foreground[:first] have finished

    def check() -> bool:
        nonlocal first
        i = first
        while i < len(foreground) and foreground[i].finished:
            i += 1
        first = i
        return bool(foreground) and i == len(foreground)

    return check
