"""The RoCE baseline's reliability and rate (``TransportMode.ROCE``), as RoCE NICs run
them (docs/nic-emu.md section 5):

- **Receiver**: only the next PSN is accepted; the first out-of-sequence packet of a gap
  is answered with a NAK (sequence error) carrying the expected PSN, once per gap.
- **Sender**: a NAK rewinds to the NAKed PSN (go back N); the ACK timeout is
  InfiniBand's Local ACK Timeout, 4.096 us x 2^t (``RoceConfig.ack_timeout_exp``, t = 14:
  67.1 ms), fixed (no backoff), and rewinds to the oldest unacknowledged PSN; after
  ``retry_count`` timeouts in a row without progress the QP fails (``max_retries``).
- **DCQCN** (:mod:`nic_emu.dcqcn`): a CE-marked packet asks the receiver's CNP pacer for
  a CNP, which rides back as the ECN echo of an acknowledgement; the sender's rate
  limiter spaces its packets at the DCQCN rate.
"""

from __future__ import annotations

from mrc_wire import DataPacket
from nic_emu import event_log as ev_kinds
from nic_emu.connection.common import _NACK_SEQUENCE, _span
from nic_emu.dcqcn import CnpPacer, DcqcnRate
from nic_emu.sender import PSN_MASK


class GoBackNMixin:
    """Mixed into :class:`~nic_emu.connection.queue_pair.Connection`, whose
    ``__init__`` calls :meth:`_roce_setup` for a RoCE QP."""

    def _roce_setup(self, now: int) -> None:
        roce = self.cfg.roce
        self._gbn_rto = roce.ack_timeout_ns
        self._rto_base = self._rto_ceiling = self._rtt_bound = self._gbn_rto
        self._gbn_retries = 0
        self._gbn_last_timeout = -1
        self._adaptive = False  # the ACK timeout is fixed, as configured on the QP
        dc = roce.dcqcn
        if dc.enabled:
            self.dcqcn = DcqcnRate(dc, self.cfg.port_rate_bps, now)
            self.cnp = CnpPacer(dc)

    # -- receiver ------------------------------------------------------------------

    def _gbn_out_of_sequence(self, m: DataPacket, now: int) -> None:
        """A packet past a gap: dropped; NAK the expected PSN once per gap."""
        self.counters["rx_out_of_order"] += 1
        recv = self.recv
        if not recv.nak_outstanding:  # type: ignore[union-attr]
            recv.nak_outstanding = True  # type: ignore[union-attr]
            self._send_nack(now, _NACK_SEQUENCE, recv.rcv_nxt, m.ev, m.timestamp, False)

    def _cnp_due(self, now: int) -> bool:
        """A CE-marked packet arrived: True if a CNP goes back with the next ACK."""
        cnp = self.cnp
        return cnp is not None and cnp.on_ce(now)

    # -- sender --------------------------------------------------------------------

    def _gbn_on_nak(self, psn: int, now: int) -> None:
        """A sequence-error NAK: resend everything from the NAKed PSN."""
        count = self.send.rewind(psn)
        self.counters["gobackn_rewinds"] += 1
        nic = self.nic
        nic.log.record(
            now,
            nic.name,
            ev_kinds.RETRANSMIT,
            qpn=self.qpn,
            psn=psn,
            reason="go_back_n",
            packets=count,
        )

    def _gbn_timeout(self, now: int) -> None:
        """The ACK timeout passed: count a retry (reset by progress since the last
        timeout), fail after ``retry_count`` of them, else resend from the oldest
        unacknowledged PSN."""
        if self.last_ack_ns > self._gbn_last_timeout:
            self._gbn_retries = 0
        self._gbn_last_timeout = now
        self._gbn_retries += 1
        counters = self.counters
        counters["rto_silent"] += 1
        counters["losses_timeout"] += 1
        nic = self.nic
        nic.log.record(
            now, nic.name, ev_kinds.RTO, qpn=self.qpn, backoff=self._gbn_retries, blamed="ack"
        )
        limit = self.cfg.roce.retry_count
        if self._gbn_retries > limit:
            self.fail(
                "max_retries",
                f"no acknowledgement from {self.peer} QPN {self.peer_qpn:#x} after {limit} "
                f"retries of the {_span(self._gbn_rto)} ACK timeout "
                f"(last ack {_span(now - self.last_ack_ns)} ago)",
                now,
            )
            return
        send = self.send
        psn = send.snd_una
        count = send.rewind(psn)
        counters["gobackn_rewinds"] += 1
        nic.log.record(
            now,
            nic.name,
            ev_kinds.RETRANSMIT,
            qpn=self.qpn,
            psn=psn & PSN_MASK,
            reason="go_back_n_timeout",
            packets=count,
        )
