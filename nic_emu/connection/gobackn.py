"""The RoCE baseline's sender (``TransportMode.ROCE``), as RoCE NICs run it
(docs/nic-emu.md section 5); its receiver half (one NAK per gap, the CNP pacer) is in
:class:`nic_emu.connection.receive.Receiver`:

- **Receiver**: only the next PSN is accepted; the first out-of-sequence packet of a gap
  is answered with a NAK (sequence error) carrying the expected PSN, once per gap.
- **Sender** (:class:`GoBackN`): a NAK rewinds to the NAKed PSN (go back N); the ACK
  timeout is InfiniBand's Local ACK Timeout, 4.096 us x 2^t (``RoceConfig.ack_timeout_exp``,
  t = 14: 67.1 ms), fixed (no backoff), and rewinds to the oldest unacknowledged PSN;
  after ``retry_count`` timeouts in a row without progress the QP fails (``max_retries``).
- **DCQCN** (:mod:`nic_emu.dcqcn`): a CE-marked packet asks the receiver's CNP pacer for
  a CNP, which rides back as the ECN echo of an acknowledgement; the sender's rate
  limiter (``GoBackN.dcqcn``) spaces its packets at the DCQCN rate.
"""

from __future__ import annotations

from nic_emu import event_log as ev_kinds
from nic_emu.config import RoceConfig
from nic_emu.connection.common import span
from nic_emu.connection.records import ConnectionLog
from nic_emu.dcqcn import DcqcnRate
from nic_emu.sender import PSN_MASK, SendState


class GoBackN:
    """The go-back-N sender of one RoCE QP: its ACK timeout and retries in a row, and
    its DCQCN rate (None when DCQCN is off)."""

    def __init__(
        self,
        roce: RoceConfig,
        port_rate_bps: int,
        now: int,
        *,
        peer_label: str,
        counters: dict[str, int],
        log: ConnectionLog,
    ) -> None:
        self.ack_timeout_ns = roce.ack_timeout_ns
        self.retry_count = roce.retry_count
        self.retries = 0
        self.last_timeout = -1
        self.peer_label = peer_label
        self.counters = counters
        self.log = log
        dc = roce.dcqcn
        self.dcqcn = DcqcnRate(dc, port_rate_bps, now) if dc.enabled else None

    def on_nak(self, send: SendState, psn: int, now: int) -> None:
        """A sequence-error NAK: resend everything from the NAKed PSN."""
        count = send.rewind(psn)
        self.counters["gobackn_rewinds"] += 1
        self.log.retransmit(now, psn, "go_back_n", packets=count)

    def on_timeout(self, send: SendState, now: int, last_ack_ns: int) -> str | None:
        """The ACK timeout passed: count a retry (reset by progress since the last
        timeout); past ``retry_count`` of them, the failure message, else resend from
        the oldest unacknowledged PSN (None)."""
        if last_ack_ns > self.last_timeout:
            self.retries = 0
        self.last_timeout = now
        self.retries += 1
        counters = self.counters
        counters["rto_silent"] += 1
        counters["losses_timeout"] += 1
        self.log.record(now, ev_kinds.RTO, backoff=self.retries, blamed="ack")
        limit = self.retry_count
        if self.retries > limit:
            return (
                f"no acknowledgement from {self.peer_label} after {limit} "
                f"retries of the {span(self.ack_timeout_ns)} ACK timeout "
                f"(last ack {span(now - last_ack_ns)} ago)"
            )
        psn = send.snd_una
        count = send.rewind(psn)
        counters["gobackn_rewinds"] += 1
        self.log.retransmit(now, psn & PSN_MASK, "go_back_n_timeout", packets=count)
        return None
